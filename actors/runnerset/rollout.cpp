#include "actors/runnerset/rollout.hpp"

#include <algorithm>

namespace octorun::runnerset {

std::int32_t replacement_budget(std::int32_t desired) { return std::max<std::int32_t>(1, (desired + 3) / 4); }

std::vector<std::string> runners_to_replace(std::int32_t desired, std::vector<rollout_view> runners) {
  std::int32_t budget = replacement_budget(desired);
  for (const auto& r : runners) budget -= r.outdated && r.leaving ? 1 : 0;
  std::erase_if(runners, [](const rollout_view& r) { return !r.outdated || !r.idle || r.leaving; });
  std::sort(runners.begin(), runners.end(), [](const rollout_view& a, const rollout_view& b) {
    if (a.pod_ready != b.pod_ready) return !a.pod_ready;
    if (a.created != b.created) return a.created < b.created;
    return a.name < b.name;
  });
  std::vector<std::string> out;
  for (const auto& r : runners) {
    if (budget <= 0) break;
    out.push_back(r.name);
    --budget;
  }
  return out;
}

}  // namespace octorun::runnerset
