// Who may write a Runner's phase, and to what (docs/runner-phases.md).
//
// - Pending: the runner exists and has not been assigned a job. The
//   controller publishes it only over an empty (or legacy "Unknown") phase,
//   with the resourceVersion it decided on, so it never overwrites a Running
//   that the job path wrote concurrently.
// - Running: a job has been assigned. Only the job path sets it; pod status
//   never promotes a runner.
// - Succeeded, Failed, Outdated: terminal; nothing ever leaves them.
// - A runner being deleted is never promoted.
#pragma once

#include <cstdint>
#include <optional>

#include "model/runner_phase.hpp"

namespace octorun::runner {

// What the runner's pod says about the runner process.
struct pod_observation {
  bool exists = false;
  bool deleting = false;
  // The runner container has exited (the pod's phase may lag behind).
  bool runner_exited = false;
  int exit_code = 0;
  bool ready = false;
  // Labelled octorun.io/busy=true (children.hpp busy_pod_patch): the set's
  // PodDisruptionBudget protects it from eviction.
  bool marked_busy = false;
};

// The runner exit code that means "this runner version is too old" (the
// actions runner's own convention; the pod must be replaced, not retried).
inline constexpr int outdated_exit_code = 7;

struct controller_view {
  model::runner_phase current = model::runner_phase::unset;
  bool deleting = false;
  bool has_job = false;
};

// The phase the controller publishes from what it observed, or nullopt to
// leave the phase alone. Callers send it with a resourceVersion precondition
// and re-decide on conflict.
std::optional<model::runner_phase> controller_phase(const controller_view& runner,
                                                    const pod_observation& pod);

// What to do with a runner whose pod failed (runner container exited non-zero,
// or the pod vanished) before the runner finished.
enum class pod_failure_action {
  recreate_pod,  // no job was lost: record the failure, recreate after backoff
  mark_failed,   // the retry budget is spent, or a job was running: Failed
};
pod_failure_action on_pod_failure(bool had_job, int failures_so_far, int max_failures);

// Backoff before recreating a failed pod: 0 s for the first failure, then
// doubling from `base` up to `cap`.
std::int64_t pod_retry_delay_seconds(int failures_so_far, std::int64_t base = 5, std::int64_t cap = 300);

// The job path (listener JobStarted / webhook workflow_job in_progress).
enum class job_started_verdict {
  promote,          // write phase Running + the job fields, resourceVersion-locked
  already_running,  // the same job is already recorded: nothing to write
  skip_terminal,    // the runner has finished: never resurrect it
  skip_deleting,    // the runner is being deleted: never promote it
};
struct job_view {
  model::runner_phase current = model::runner_phase::unset;
  bool deleting = false;
  std::optional<std::int64_t> recorded_job_id;
};
job_started_verdict on_job_started(const job_view& runner, std::int64_t job_id);

// The job path's end (listener JobCompleted / webhook workflow_job completed).
// An ephemeral runner serves one job: once GitHub says it completed, the
// runner is done, whether or not its pod has exited yet. A completion that
// overtakes its own start (reordered deliveries) finishes the runner too.
enum class job_completed_verdict {
  finish,            // write phase Succeeded (+ the job fields), resourceVersion-locked
  already_finished,  // terminal already: nothing to write
  skip_deleting,     // being deleted: the deletion runs its course
  skip_other_job,    // the runner recorded a different job
};
job_completed_verdict on_job_completed(const job_view& runner, std::int64_t job_id);

}  // namespace octorun::runner
