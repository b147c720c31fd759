#include "actors/runnerset/startup_deadline.hpp"

#include <algorithm>
#include <vector>

namespace octorun::runnerset {

void startup_samples::add(std::int64_t s, const startup_rule& rule) {
  seconds.push_back(std::max<std::int64_t>(0, s));
  while (seconds.size() > std::max<std::size_t>(1, rule.window)) seconds.pop_front();
}

std::optional<std::int64_t> p95(const std::deque<std::int64_t>& seconds) {
  if (seconds.empty()) return std::nullopt;
  std::vector<std::int64_t> sorted(seconds.begin(), seconds.end());
  std::sort(sorted.begin(), sorted.end());
  // Nearest rank: the smallest value at least 95 % of the samples do not exceed.
  const std::size_t rank = (sorted.size() * 95 + 99) / 100;
  return sorted[std::max<std::size_t>(rank, 1) - 1];
}

startup_deadline startup_deadline_for(const std::optional<std::int32_t>& set, const startup_samples& observed,
                                      const startup_rule& rule) {
  startup_deadline d;
  d.samples = observed.seconds.size();
  if (set) {
    d.value = std::chrono::seconds(*set);
    return d;
  }
  d.derived = true;
  const auto p = p95(observed.seconds);
  if (!p || observed.seconds.size() < rule.min_samples) {
    d.value = rule.ceiling;
    return d;
  }
  // (Capped before multiplying: a sample is at most what a clock can say.)
  const auto scaled = std::min<std::int64_t>(*p, rule.ceiling.count()) * rule.multiple;
  d.value = std::clamp(std::chrono::seconds(scaled), rule.floor, std::max(rule.floor, rule.ceiling));
  return d;
}

}  // namespace octorun::runnerset
