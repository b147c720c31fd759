// Stuck starts: a runner that is not online (its pod ready) within its
// variant's start-up deadline (startup_deadline.hpp) after the set first
// saw it is replaced. plan() takes such a laggard as leaving: it holds its
// maxRunners slot until its Runner is gone but serves no demand, so the
// scale rule creates its replacement as soon as there is room (at once when
// the variant is below maxRunners; when it is full, once the laggard is
// gone), and the laggard is removed the way scale-down removes an idle
// runner: GitHub first, kept if GitHub says it took a job.
//
// A runner is no laggard once anything says it started: its pod was ready
// once (the Pod's watch, before its status publishes it), a job start named
// it (before its status says Running), its status has a job, GitHub called
// it busy, or its job completed. Pure, but for the notes the actor makes on
// its observation as events come.
#pragma once

#include <chrono>
#include <optional>
#include <set>
#include <string>

#include "actors/runnerset/observation.hpp"
#include "actors/runnerset/set_events.hpp"
#include "messages/jobs.hpp"
#include "model/children.hpp"

namespace octorun::runnerset {

// ---- the actor's notes on its observation ----
// A Runner event: the first sight of the Runner starts its deadline (a new
// leader gives a starting runner the whole deadline again: never early).
void note_runner_seen(set_observation& w, const std::string& runner, time_point now);
// A Pod event of the set's Runner `runner`: once ready, the runner came
// online, and its start-up time (the pod's Ready time less the Runner's
// creation, both the cluster's clocks) joins its variant's samples, once.
void note_runner_pod(set_observation& w, const std::string& runner, const model::runner_pod& pod);
// A job start naming the set's Runner `runner`. A job queued no later than
// the Runner was made waited for its whole start: its pod, and then the
// runner process coming online, which the pod's readiness does not show
// (a runner registers seconds after its container starts). Its start less
// the Runner's creation (GitHub's clock and the cluster's) joins what a
// start-time target sizes from (observation.hpp, online_startups), once per
// runner; the deadline's samples stay pod readiness, which is what the
// stuck-start check waits for.
void note_job_start(set_observation& w, const std::string& runner, const messages::job_info& job);

// ---- the decision ----
// The variant's deadline: its spec's, else derived from its samples.
startup_deadline startup_deadline_of(const set_observation& o, const model::effective_variant& v);
// Not while GitHub refuses registrations or the set's GitHub budget is
// paused: a replacement would wait as the laggard does.
bool replaces_stuck_starts(const set_observation& o);
// A stuck start as the scale rule counts it: leaving (it holds its slot,
// serves no demand, and is no candidate for scale-down).
runner_view as_leaving(runner_view view);

struct start_check {
  // Not started: past the deadline, or their removal as such under way.
  std::set<std::string> stuck;
  std::optional<time_point> next_deadline;  // the earliest deadline still ahead
};
// The variant's runners that have not started, judged against `deadline`
// at o.now; new laggards only when `find_new` (replaces_stuck_starts).
start_check check_starts(const set_observation& o, const std::string& variant, std::chrono::seconds deadline,
                         bool find_new);

// How long, in whole seconds, the variant's longest-starting runner has been
// starting (seen, not started, not leaving, not a stuck start noted); none:
// no runner of the variant is starting.
std::optional<std::int64_t> longest_starting(const set_observation& o, const std::string& variant);

// The Event of one replaced stuck start (a Warning regarding the set).
set_event stuck_start_event(const std::string& runner, const std::string& variant,
                            std::chrono::seconds deadline, bool derived);

}  // namespace octorun::runnerset
