#include "actors/runnerset/scaling.hpp"

#include <algorithm>
#include <limits>

namespace octorun::runnerset {

std::int32_t desired_runners(const demand& d) {
  const std::int64_t lo = std::max<std::int32_t>(0, d.min_runners);
  const std::int64_t hi = std::max<std::int64_t>(lo, d.max_runners);
  const std::int64_t buffer = std::max<std::int64_t>(lo, d.warm);
  const std::int64_t want =
      std::max<std::int64_t>(buffer + std::max<std::int64_t>(0, d.assigned_jobs), d.floor);
  return static_cast<std::int32_t>(std::clamp(want, lo, hi));
}

std::vector<std::int32_t> replica_floors(std::int32_t replicas, const std::vector<demand>& variants) {
  const std::size_t n = variants.size();
  std::vector<std::int64_t> share(n), room(n), weight(n);
  std::int64_t wanted = 0, total_weight = 0;
  for (std::size_t i = 0; i < n; ++i) {
    auto own = variants[i];
    own.floor = 0;
    share[i] = desired_runners(own);
    room[i] = std::max<std::int64_t>(own.min_runners, own.max_runners) - share[i];
    // (Capped so that extra * weight cannot overflow.)
    weight[i] = std::clamp<std::int64_t>(own.assigned_jobs, 0, std::numeric_limits<std::int32_t>::max());
    wanted += share[i];
    total_weight += weight[i];
  }
  if (total_weight == 0) std::fill(weight.begin(), weight.end(), 1);
  // Water-filling: each round hands every variant with room its weighted
  // part of what is left; a variant that fills up drops out and its part
  // goes round again. Rounding leftovers (fewer than the variants with room)
  // go one each, heaviest first. Each round places at least one runner or
  // fills a variant, so this ends after a few rounds whatever `replicas` is.
  std::int64_t extra = static_cast<std::int64_t>(std::max(replicas, 0)) - wanted;
  while (extra > 0) {
    std::vector<std::size_t> open;
    std::int64_t open_weight = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (room[i] > 0) {
        open.push_back(i);
        open_weight += weight[i];
      }
    if (open.empty()) break;
    std::int64_t placed = 0;
    for (auto i : open) {
      const auto part = open_weight > 0 ? std::min(room[i], extra * weight[i] / open_weight) : 0;
      share[i] += part;
      room[i] -= part;
      placed += part;
    }
    extra -= placed;
    if (placed > 0) continue;
    std::stable_sort(open.begin(), open.end(), [&](auto a, auto b) { return weight[a] > weight[b]; });
    for (auto i : open) {
      if (extra == 0) break;
      ++share[i];
      --room[i];
      --extra;
    }
  }
  return {share.begin(), share.end()};
}

std::int64_t registered_runner_id(std::int64_t status_id, std::int64_t jit_id) {
  return status_id != 0 ? status_id : jit_id;
}

bool holds_capacity(const runner_view& r) { return !r.finished(); }

bool serves_demand(const runner_view& r) {
  return holds_capacity(r) && !r.job_completed && (!r.deleting || r.busy());
}

scale_plan plan_scale(std::int32_t desired, std::int32_t max_runners,
                      const std::vector<runner_view>& runners) {
  scale_plan plan;
  std::vector<const runner_view*> idle;
  std::int32_t occupied = 0, held = 0, going = 0;
  for (const auto& r : runners) {
    if (r.finished()) {
      if (!r.deleting) plan.remove_finished.push_back(r.name);
      continue;
    }
    ++held;
    if (!serves_demand(r)) continue;  // done or going; its slot is free once its Runner is
    ++occupied;
    if (r.busy() || r.deleting) continue;
    if (r.removal_in_flight)
      ++going;
    else
      idle.push_back(&r);
  }

  if (occupied < desired) {
    plan.create = std::max(0, std::min(desired - occupied, max_runners - held));
    return plan;
  }
  std::int32_t excess = occupied - std::max(desired, 0) - going;
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
