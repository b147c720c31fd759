// The Runner actor: one per Runner object. It holds the latest Runner and
// Pod its watches delivered and its JIT Secret as it last read or wrote it
// (Secrets are not watched), asks next_step() what to do, does
// that one thing through the Kubernetes and GitHub worker pools, and asks
// again — level-triggered, one write in flight at a time.
//
// The job path (job_started / job_completed from the listener or the webhook
// intake) is the only way to Running, and ends the runner (Succeeded) when
// its one job completes: decide with on_job_started() / on_job_completed()
// on the Runner as the actor holds it, and merge-patch status with its
// resourceVersion; on a conflict read it from the server and re-decide, so
// a terminal phase written in between is never undone.
#pragma once

#include <atomic>
#include <caf/all.hpp>
#include <chrono>
#include <cstdint>
#include <string>

#include "actors/metrics/recorder.hpp"
#include "actors/protocols.hpp"
#include "actors/runner/next_step.hpp"
#include "actors/wall_clock.hpp"
#include "actors/watched.hpp"
#include "messages/jobs.hpp"

namespace octorun::runner {

struct runner_actor_config {
  std::string ns;
  std::string name;
  // Its RunnerSet's name: the actor's Kubernetes requests wait for that
  // set's turn in the request pool (kube::request_turn), as the set's own do.
  std::string set;
  caf::actor kube;  // kube::spawn_request_pool
  // Its RunnerSet's actor (or anything answering the same API, e.g. a
  // GitHub REST pool cast to it): JIT configurations and runner removal.
  protocols::runner_github_api github;
  // kube::spawn_event_recorder: an Event for each phase the actor writes and
  // each pod failure it retries (actors/runner/events.hpp). None: no Events.
  caf::actor events;
  // Normal Events too (which ones: event_for_transition in events.hpp; one
  // per job); false: Warnings only (Failed, Outdated, a pod failure retried).
  bool phase_events = true;
  // JIT configurations with this runner group and the Runner's labels (the
  // RunnerSet asks its scale set instead under the Listener intake).
  std::int64_t runner_group_id = 1;
  std::string user_agent = "octorun";
  limits lim;
  std::chrono::milliseconds busy_recheck{30'000};  // a busy runner being deleted is asked again
  std::chrono::milliseconds retry_initial{500};    // after a failed call
  std::chrono::milliseconds retry_max{60'000};
  // How long a GitHub request is waited for; the request pool sends no
  // Kubernetes request that queued longer (the controller gives it this),
  // which is how the actor's own Kubernetes requests, sent without a CAF
  // timeout (runner_state.hpp ask_kube), are bounded.
  std::chrono::milliseconds request_timeout{90'000};
  // A request in flight this long is taken as lost (its answer can no
  // longer come: past request_timeout and the client's own exchange
  // timeout) and the decision that sent it runs again; checked at each resync.
  std::chrono::milliseconds lost_after{300'000};
  // Reconcile from what the watches last showed even without news: the
  // level-triggered safety net for anything an event did not trigger.
  std::chrono::milliseconds resync{60'000};
  // Whether the manager may read the Runner's namespace yet (its set's
  // reads binding granted: runnerset/plan.hpp reads_granted), as its set
  // last decided; none: always. Its first step, reading its JIT Secret,
  // waits for it (after a restart the set binds its reads again first),
  // looked at again after namespace_readable_recheck, doubling up to resync.
  std::shared_ptr<const std::atomic<bool>> namespace_readable;
  std::chrono::milliseconds namespace_readable_recheck{200};
  // The manager's metrics: the Runner's timeline and cost once it is gone
  // (recorder::runner_gone). None: nothing is recorded.
  std::shared_ptr<metrics::recorder> metrics;
  // The times the actor writes (conditions' lastTransitionTime, pod
  // failures) and the Runner's end (wall_clock.hpp).
  octorun::wall_clock wall_clock = &epoch_seconds_now;
};

// Sent by the RunnerSet after it removed this runner from GitHub itself
// (scale-down), so the Runner's finalizer need not ask GitHub again.
using removed_from_github_atom = caf::atom_constant<caf::atom("rgone")>;

// Sent by the RunnerSet before the first event of a Runner it created
// itself: no earlier actor can have registered it on GitHub, so a deletion
// before its own registration needs no lookup by name.
using made_here_atom = caf::atom_constant<caf::atom("rmadehere")>;

// The Runner actor's inbound protocol (its RunnerSet sends all of it,
// straight, holding its handle: child_handles::send checks it):
// the watch events of its Runner and Pod; the job path's start and
// completion; the set's scale-down having removed it from GitHub; that the
// set made the Runner. It quits
// when the Runner is gone.
using runner_actor =
    caf::typed_actor<caf::reacts_to<watched::runner_event>, caf::reacts_to<watched::pod_event>,
                     caf::reacts_to<messages::job_started>, caf::reacts_to<messages::job_completed>,
                     caf::reacts_to<removed_from_github_atom>, caf::reacts_to<made_here_atom>>;

runner_actor spawn_runner(caf::local_actor* parent, runner_actor_config cfg);
runner_actor spawn_runner(caf::actor_system& sys, runner_actor_config cfg);

}  // namespace octorun::runner
