// How many runners a RunnerSet (or one of its variants) wants, and which
// runners to create or remove to get there. Pure: the RunnerSet actor feeds
// it what it observed and turns the plan into API calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/runner_phase.hpp"

namespace octorun::runnerset {

struct demand {
  std::int32_t min_runners = 0;
  std::int32_t max_runners = 0;
  // This pool's share of spec.replicas (written by `kubectl scale` or an HPA
  // through the scale subresource): a floor under job demand, never a cap,
  // so an autoscaler and job demand never pull against each other.
  std::int32_t floor = 0;
  // Jobs assigned to this pool and not yet completed (listener statistics or
  // webhook demand).
  std::int64_t assigned_jobs = 0;
  // The idle runners a start-time target keeps warm (start_time.hpp; 0:
  // none): the buffer on top of demand is the larger of it and minRunners.
  std::int32_t warm = 0;
};

// clamp(max(max(minRunners, warm) + assigned jobs, floor), minRunners,
// maxRunners): the buffer is idle on top of demand, the floor a lower bound
// on the total.
std::int32_t desired_runners(const demand& d);

// spec.replicas is one scale target for the whole set (the scale subresource
// has one replicas field); each variant's floor is its share: first what the
// variant's own demand wants (desired_runners without a floor), then what the
// target asks beyond the sum of those, in proportion to the variants'
// assigned jobs (evenly when none has any, declaration order breaking ties),
// never past a variant's maxRunners. One entry per `variants` entry.
std::vector<std::int32_t> replica_floors(std::int32_t replicas, const std::vector<demand>& variants);

struct runner_view {
  std::string name;
  model::runner_phase phase = model::runner_phase::unset;
  bool has_job = false;      // a job is recorded (status.job)
  bool deleting = false;     // deletionTimestamp set
  bool pod_ready = false;    // online: may be handed a job by GitHub at any moment
  std::int64_t created = 0;  // creationTimestamp, seconds since the epoch
  // GitHub said its job completed, before the Runner's own actor has written
  // Succeeded: an ephemeral runner serves one job, so it holds no capacity
  // any more, and it is not removed before its phase is written.
  bool job_completed = false;
  // Made from an older template (rollout.hpp): scale-down takes it before a
  // current one.
  bool outdated = false;
  // Its removal (GitHub first, then its Runner) is under way: it keeps its
  // place until answered (GitHub may yet call it busy), is no candidate
  // again, and counts towards the idle runners already going.
  bool removal_in_flight = false;

  bool busy() const { return has_job || phase == model::runner_phase::running; }
  bool finished() const { return model::is_terminal(phase); }
};

// The GitHub runner id scale-down removes a runner by: its status's, else
// its JIT configuration's (the status publishes it only after the pod is
// made). 0: not registered, so it can be deleted without asking GitHub.
std::int64_t registered_runner_id(std::int64_t status_id, std::int64_t jit_id);

struct scale_plan {
  std::int32_t create = 0;
  // Idle runners to remove, most removable first. Each is removed from GitHub
  // before it is deleted; a runner GitHub reports busy is kept.
  std::vector<std::string> remove_idle;
  // Finished runners (terminal phase) to delete: they hold no capacity.
  std::vector<std::string> remove_finished;
};

// Two counts, because a runner can be on its way out and still able to run
// a job:
// - Capacity (the hard bound): every runner that is not terminal holds one
//   of `max_runners` slots until its Runner is gone, being deleted or not,
//   its job reported completed or not, and so does every create in flight.
//   No plan ever takes the holders past `max_runners`, whatever order job
//   messages, statistics and watch events arrive in.
// - Demand: the runners that serve it are the ones that are not terminal,
//   not done (GitHub said their job completed: an ephemeral runner serves
//   one job) and not being deleted (unless still busy). Creates fill the gap
//   to `desired` (within the bound); removals take idle runners down to it,
//   the ones whose removal is in flight counted among those going, so no
//   more than serving - desired are ever on their way out.
// Never lists a busy runner for removal; finished runners (terminal phase)
// are listed for deletion and hold nothing, so failures never block
// scale-up.
scale_plan plan_scale(std::int32_t desired, std::int32_t max_runners,
                      const std::vector<runner_view>& runners);

// Holds one of the maxRunners slots: not terminal (starting, idle, running,
// done but not yet Succeeded, or being deleted).
bool holds_capacity(const runner_view& r);
// Counts towards the desired count: holds capacity, its job is not over, and
// it is not being deleted unless it is still running its job.
bool serves_demand(const runner_view& r);

}  // namespace octorun::runnerset
