#include "actors/runnerset/scaling.hpp"

#include <algorithm>
#include <limits>

namespace octorun::runnerset {

std::int32_t desired_runners(const demand& d) {
  const std::int64_t lo = std::max<std::int32_t>(0, d.min_runners);
  const std::int64_t hi = std::max<std::int64_t>(lo, d.max_runners);
  std::int64_t want =
      d.replicas ? static_cast<std::int64_t>(*d.replicas) : lo + std::max<std::int64_t>(0, d.assigned_jobs);
  return static_cast<std::int32_t>(std::clamp(want, lo, hi));
}

std::int64_t registered_runner_id(std::int64_t status_id, std::int64_t secret_id) {
  return status_id != 0 ? status_id : secret_id;
}

scale_plan plan_scale(std::int32_t desired, const std::vector<runner_view>& runners) {
  scale_plan plan;
  std::vector<const runner_view*> idle;
  std::int32_t occupied = 0;
  for (const auto& r : runners) {
    if (r.finished()) {
      if (!r.deleting) plan.remove_finished.push_back(r.name);
      continue;
    }
    if (r.job_completed) continue;  // done; its actor writes Succeeded, then it is deleted
    if (r.deleting) {
      if (r.busy()) ++occupied;  // still running its job
      continue;
    }
    ++occupied;
    if (!r.busy()) idle.push_back(&r);
  }

  if (occupied < desired) {
    plan.create = desired - occupied;
    return plan;
  }
  std::int32_t excess = occupied - std::max(desired, 0);
  // Not-yet-online runners first: GitHub cannot be handing them a job right
  // now. Then outdated ones (a rollout replaces them anyway), then the
  // newest, which have served least. Names break ties so the
  // plan is deterministic.
  std::sort(idle.begin(), idle.end(), [](const runner_view* a, const runner_view* b) {
    if (a->pod_ready != b->pod_ready) return !a->pod_ready;
    if (a->outdated != b->outdated) return a->outdated;
    if (a->created != b->created) return a->created > b->created;
    return a->name < b->name;
  });
  for (const auto* r : idle) {
    if (excess <= 0) break;
    plan.remove_idle.push_back(r->name);
    --excess;
  }
  return plan;
}

}  // namespace octorun::runnerset
