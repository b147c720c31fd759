// The webhook intake's sweep (docs/intakes.md): a webhook set's demand is
// reconciled from what GitHub lists as queued or running, so that a delivery
// lost (GitHub could not deliver it, a follower took it, a leader died with
// it) is served all the same. Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "messages/active_work.hpp"
#include "messages/jobs.hpp"

namespace octorun::runnerset {

// A job the set follows to its end: one it counts as demand, or one its
// Runners run (status.job), with the run it belongs to.
struct followed_job {
  std::int64_t run_id = 0;
  std::string repository;  // "owner/repo"
};

struct demand_sweep {
  // Queued or running jobs the set neither follows nor saw complete: demand
  // no delivery brought. Each takes the route its delivery would.
  std::vector<messages::workflow_job> found;
  // Followed jobs GitHub lists as completed whose end did not reach the set:
  // each ends as its `completed` delivery would end it (its runner too).
  std::vector<messages::workflow_job> finished;
  // Counted jobs whose run is over but whose end GitHub did not list (the
  // run's jobs could not be listed): they stop counting.
  std::vector<std::int64_t> ended;
};

// `followed`: the jobs followed when the sweep was asked for; `counted` and
// `completed`: what the set counts and has seen complete when the answer
// came; `listed`: GitHub's answer.
demand_sweep reconcile_demand(const std::map<std::int64_t, followed_job>& followed,
                              const std::set<std::int64_t>& counted, const std::set<std::int64_t>& completed,
                              const messages::active_work& listed);

// What the sweep asks GitHub: the runs of the followed jobs (to their end)
// and the runs listed before (not listed again while they run).
messages::sweep_request sweep_request_for(const std::map<std::int64_t, followed_job>& followed,
                                          const std::set<std::int64_t>& listed_runs);

// A job the sweep found or saw finish, as the job message its delivery would
// be: completed ends it, running (with its runner) starts it, queued is
// demand. `swept` is set.
messages::job_message job_message_of(const messages::workflow_job& job);

}  // namespace octorun::runnerset
