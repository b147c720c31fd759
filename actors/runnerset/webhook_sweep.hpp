// The webhook intake's sweep (docs/intakes.md): a webhook set's demand is
// reconciled from what GitHub lists as queued or running, so that a delivery
// lost (GitHub could not deliver it, a follower took it, a leader died with
// it) is served all the same. Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "messages/active_work.hpp"
#include "messages/jobs.hpp"

namespace octorun::runnerset {

struct demand_sweep {
  // Jobs the set counted before the sweep began whose run GitHub no longer
  // lists as queued or running (or which it lists as completed): their end
  // did not reach us. They stop counting and are remembered as completed.
  std::vector<std::int64_t> ended;
  // Queued or running jobs the set neither counts nor saw complete: demand
  // that no delivery brought. Each goes the route a delivery takes.
  std::vector<messages::workflow_job> found;
};

// `counted_at_start`: the jobs the set counted (each with its run id) when
// the sweep was asked for; `counted_now` and `completed`: what it counts and
// has seen complete when the answer came; `listed`: GitHub's answer.
demand_sweep reconcile_demand(const std::map<std::int64_t, std::int64_t>& counted_at_start,
                              const std::set<std::int64_t>& counted_now,
                              const std::set<std::int64_t>& completed, const messages::active_work& listed);

// The runs whose jobs the sweep need not list: those of the jobs counted
// (their jobs are known; a run's end shows in the run listing).
std::vector<std::int64_t> known_runs(const std::map<std::int64_t, std::int64_t>& counted);

// A job the sweep found, as the job message a delivery of it would be: a
// running job (with its runner) starts, a queued one is demand. `swept` is set.
messages::job_message job_message_of(const messages::workflow_job& job);

// The interval between sweeps: none (zero) turns periodic sweeps off (the
// sweep when the set's actor starts still happens).
inline constexpr std::chrono::seconds default_sweep_interval{60};

}  // namespace octorun::runnerset
