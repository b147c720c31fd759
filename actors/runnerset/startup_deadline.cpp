#include "actors/runnerset/startup_deadline.hpp"

#include <algorithm>

namespace octorun::runnerset {

void startup_samples::add(std::int64_t s, const startup_rule& rule, std::chrono::steady_clock::time_point at,
                          std::int64_t node_wait) {
  seconds.push_back(std::max<std::int64_t>(0, s));
  heard.push_back(at);
  node_waits.push_back(std::clamp<std::int64_t>(node_wait, 0, seconds.back()));
  while (seconds.size() > std::max<std::size_t>(1, rule.window)) {
    seconds.pop_front();
    heard.pop_front();
    node_waits.pop_front();
  }
}

std::deque<std::int64_t> startup_samples::since(std::chrono::steady_clock::time_point since,
                                                bool net_of_node_waits) const {
  std::deque<std::int64_t> out;
  for (std::size_t i = 0; i < seconds.size() && i < heard.size(); ++i)
    if (heard[i] > since) {
      const auto wait = net_of_node_waits && i < node_waits.size() ? node_waits[i] : 0;
      out.push_back(std::max<std::int64_t>(0, seconds[i] - wait));
    }
  return out;
}

bool startup_samples::replace(std::chrono::steady_clock::time_point at, std::int64_t was, std::int64_t s) {
  for (auto i = std::min(seconds.size(), heard.size()); i-- > 0;)
    if (heard[i] == at && seconds[i] == was) {
      seconds[i] = std::max<std::int64_t>(0, s);
      return true;
    }
  return false;
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
