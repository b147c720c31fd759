// The Runner actor's reconcile, as a pure function: from what the actor has
// observed (the Runner, its JIT Secret, its Pod, what GitHub said last), the
// one next thing to do. The actor runs one step at a time; the step's reply
// or the next watch event updates the observation, and it asks again.
// Running it twice on the same observation yields the same step, so a
// restarted actor simply picks up where the world is.
//
// Busy runners are never killed: a Runner being deleted keeps its finalizer,
// and so its pod, until GitHub confirms the runner is removed (GitHub
// refuses while a job runs).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "actors/runner/phase.hpp"

namespace octorun::runner {

enum class github_removal {
  not_tried,     // nothing known
  removed,       // GitHub confirmed (or the runner was never registered / is gone)
  busy,          // GitHub refused: a job is running on it
  rate_limited,  // GitHub's budget is spent until retry_not_before
  deferred,      // handed to the RunnerSet, which removes it once the budget allows
};

struct observation {
  // The Runner.
  model::runner_phase current = model::runner_phase::unset;
  bool deleting = false;
  bool has_finalizer = false;  // listed, and not released already (actor_memory::finalizer_released)
  bool has_job = false;
  std::int64_t github_runner_id = 0;  // status, or the JIT Secret
  int failures = 0;                   // status.failures entries
  bool status_pod_ready = false;      // what status says now
  // status.runnerId/runnerName differ from the JIT Secret's (just provisioned).
  bool status_registration_stale = false;
  // Its children.
  bool secret_exists = false;
  // Its pod existed at some point: this actor saw or created it, or the
  // status published it ready. A job with no pod that never existed is a
  // runner GitHub handed a job before its pod appeared (the pod's watch
  // event is late, or the runner connected early): its pod is made, not
  // mourned.
  bool pod_seen = false;
  // GitHub generated a JIT configuration (github_runner_id holds its runner
  // id) that is not stored in the Secret yet: store it, never ask again.
  bool jit_unstored = false;
  // GitHub may hold a runner of this name that nothing here records: a JIT
  // request whose answer never came (GitHub may have done the work), or an
  // earlier actor's (this one started on a Runner that had its finalizer).
  bool registration_unknown = false;
  pod_observation pod;
  // status.failures already holds an entry for this pod (by uid): the
  // failure was recorded and only the pod's deletion is left.
  bool pod_failure_recorded = false;
  // What the actor remembers between steps.
  github_removal removal = github_removal::not_tried;
  std::chrono::steady_clock::time_point now{};
  std::chrono::steady_clock::time_point retry_not_before{};  // pod recreation / busy re-check
  // Since when the actor has seen a pod of this Runner, and its pod ready (unset: not ready).
  std::chrono::steady_clock::time_point pod_seen_since{};
  std::chrono::steady_clock::time_point pod_ready_since{};
  // Why GitHub refused its registration (JIT configuration) last; empty:
  // it did not. Said on the Runner once (Registered=False, reason
  // RegistrationFailed, and a Warning Event), asked again from
  // registration_retry_at.
  std::string registration_failure{};
  bool registration_failure_published = false;  // the Registered condition says it already
  // GitHub holds its name for a runner not shown to be its own: it fails
  // (reason NameTaken) and its set makes another (jit_conflict.hpp).
  bool name_taken = false;
  std::chrono::steady_clock::time_point registration_retry_at{};
};

struct limits {
  int max_pod_failures = 5;
  // A runner without a job publishes Pending, and its readiness, once its
  // pod has been there (and ready) this long: a runner handed a job
  // meanwhile says it all in its Running write instead (docs/runner-phases.md).
  std::chrono::milliseconds status_settle{3000};
};

enum class step_kind {
  none,        // the world matches; wait for the next event
  wait_until,  // nothing to do before `at` (backoff, busy re-check)
  add_finalizer,
  provision,     // generate the JIT config on GitHub, store it in the Secret
  store_secret,  // store the JIT config GitHub already generated (its Secret create failed)
  create_pod,
  mark_pod_busy,   // label (and annotate) the pod of a runner with a job: no eviction, no scale-down of its
                   // node
  publish_status,  // phase (resourceVersion-locked), readiness, conditions and/or the GitHub registration
  record_pod_failure,  // append this pod's failure to status.failures (then delete_pod; recreate after
                       // backoff)
  mark_failed,         // phase Failed, resourceVersion-locked (retries spent, or the job's pod died)
  find_on_github,      // look the Runner's name up on GitHub (registration_unknown), before it may go
  remove_from_github,  // DELETE the runner on GitHub; busy -> keep everything
  defer_removal,       // GitHub's budget is spent and the runner can run no job: the RunnerSet
                       // removes it from GitHub after the reset, the Runner goes now
  delete_pod,          // a failed pod, to be recreated (a deleted Runner's children go by garbage collection)
  remove_finalizer,    // GitHub no longer holds the runner: the Runner, its Pod and Secret may go
};

struct step {
  step_kind kind = step_kind::none;
  std::optional<model::runner_phase> phase_to_publish;  // publish_status
  bool pod_ready = false;                               // publish_status
  std::chrono::steady_clock::time_point at{};           // wait_until
  bool registration_failed = false;  // publish_status: says why GitHub refused its registration
  bool operator==(const step&) const = default;
};

step next_step(const observation& o, const limits& l = {});

// GitHub removes a just-in-time runner by itself once its one job is done:
// a runner that ran its job to the end (Succeeded with a job) needs no
// removal call. Idle, failed, outdated and never-used runners do.
bool github_removed_it(const observation& o);

// The runner process may still take (or be running) a job: its pod exists
// and its runner container has not exited, and its phase is not terminal.
bool may_run_a_job(const observation& o);

}  // namespace octorun::runner
