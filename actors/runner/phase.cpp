#include "actors/runner/phase.hpp"

#include <algorithm>
#include <chrono>

#include "common/backoff.hpp"

namespace octorun::runner {

std::optional<model::runner_phase> controller_phase(const controller_view& runner,
                                                    const pod_observation& pod) {
  if (is_terminal(runner.current)) return std::nullopt;
  if (runner.deleting) return std::nullopt;
  if (pod.exists && pod.runner_exited) {
    if (pod.exit_code == 0) return model::runner_phase::succeeded;
    if (pod.exit_code == outdated_exit_code) return model::runner_phase::outdated;
    // Other failures go through on_pod_failure: a retry or Failed.
    return std::nullopt;
  }
  if (runner.current == model::runner_phase::unset) return model::runner_phase::pending;
  return std::nullopt;
}

pod_failure_action on_pod_failure(bool had_job, int failures_so_far, int max_failures) {
  if (had_job) return pod_failure_action::mark_failed;  // the job cannot be re-run here
  return failures_so_far + 1 >= max_failures ? pod_failure_action::mark_failed
                                             : pod_failure_action::recreate_pod;
}

std::int64_t pod_retry_delay_seconds(int failures_so_far, std::int64_t base, std::int64_t cap) {
  if (failures_so_far <= 0) return 0;
  using std::chrono::seconds;
  return exponential_backoff<seconds>{seconds(base), seconds(cap)}.delay(failures_so_far - 1).count();
}

job_started_verdict on_job_started(const job_view& runner, std::int64_t job_id) {
  if (is_terminal(runner.current)) return job_started_verdict::skip_terminal;
  if (runner.deleting) return job_started_verdict::skip_deleting;
  if (runner.current == model::runner_phase::running && runner.recorded_job_id == job_id)
    return job_started_verdict::already_running;
  return job_started_verdict::promote;
}

job_completed_verdict on_job_completed(const job_view& runner, std::int64_t job_id) {
  if (is_terminal(runner.current)) return job_completed_verdict::already_finished;
  if (runner.deleting) return job_completed_verdict::skip_deleting;
  if (runner.recorded_job_id && *runner.recorded_job_id != job_id)
    return job_completed_verdict::skip_other_job;
  return job_completed_verdict::finish;
}

}  // namespace octorun::runner
