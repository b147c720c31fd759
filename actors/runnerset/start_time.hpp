// Start-time targets in the RunnerSet (spec.startTimeTarget; the rule is
// model/start_time.hpp): the set notes each job's arrival and start as its
// messages come (either intake), sizes each targeted variant's warm runners
// when it plans, and says in StartTimeTargetMet whether the target is met.
// The warm runners are idle ones on top of demand (scaling.hpp, demand::warm):
// busy runners are never touched and maxRunners bounds the total. Pure, but
// for the notes the actor makes on its observation as messages come.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "actors/runnerset/plan.hpp"
#include "messages/jobs.hpp"
#include "model/start_time.hpp"

namespace octorun::runnerset {

// ---- the actor's notes on its observation ----
// The variant a job message is about: its scale set's (Listener), else the
// one its labels pick; none when no variant takes it.
std::optional<std::string> variant_of_job(const set_observation& o, const messages::job_info& job);
// A job was queued or assigned (or started without either being heard):
// one arrival per job, at `now`.
void note_job_arrival(set_observation& w, const messages::job_info& job, time_point now);
// A job started on a runner of `variant`: its queued -> started time, by
// GitHub's timestamps as the metrics measure it (`wall_now`: seconds since
// the epoch), joins the variant's observations.
void note_job_start_time(set_observation& w, const std::string& variant, const messages::job_info& job,
                         time_point now, std::int64_t wall_now);
// Forgets what left the window.
void forget_old_jobs(set_observation& w);

// ---- the decision ----
// The sizing of a variant with a target (none without): its demand `d`
// before warm runners, its start-ups (startup_deadline.hpp), its jobs.
std::optional<model::start_time_sizing> start_time_of(const set_observation& o,
                                                      const model::effective_variant& v, const demand& d);

// StartTimeTargetMet over the variants that have a target (none, or no
// counts: no condition): the worst one's verdict and message, and how many
// more miss.
std::optional<model::condition> start_time_condition(const variant_counts* per_variant,
                                                     const model::start_time_rule& rule);

// Wake key: when a variant's oldest job leaves the window.
std::string start_time_wake(const std::string& variant);

}  // namespace octorun::runnerset
