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

bool holds_capacity(const runner_view& r) { return !r.finished(); }

bool serves_demand(const runner_view& r) {
  return holds_capacity(r) && !r.job_completed && (!r.deleting || r.busy());
}

scale_plan plan_scale(std::int32_t desired, std::int32_t max_runners,
                      const std::vector<runner_view>& runners) {
  scale_plan plan;
  std::vector<const runner_view*> idle;
  std::int32_t occupied = 0, held = 0;
  for (const auto& r : runners) {
    if (r.finished()) {
      if (!r.deleting) plan.remove_finished.push_back(r.name);
      continue;
    }
    ++held;
    if (!serves_demand(r)) continue;  // done or going; its slot is free once its Runner is
    ++occupied;
    if (!r.busy() && !r.deleting) idle.push_back(&r);
  }

  if (occupied < desired) {
    plan.create = std::max(0, std::min(desired - occupied, max_runners - held));
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
