#include "actors/runner/phase.hpp"

#include <algorithm>
#include <chrono>

#include "common/backoff.hpp"

namespace octorun::runner {

std::optional<phase> parse_phase(std::string_view text) {
  if (text.empty() || text == "Unknown") return phase::unset;
  if (text == "Pending") return phase::pending;
  if (text == "Running") return phase::running;
  if (text == "Succeeded") return phase::succeeded;
  if (text == "Failed") return phase::failed;
  if (text == "Outdated") return phase::outdated;
  return std::nullopt;
}

std::string_view to_string(phase p) {
  switch (p) {
    case phase::unset:
      return "";
    case phase::pending:
      return "Pending";
    case phase::running:
      return "Running";
    case phase::succeeded:
      return "Succeeded";
    case phase::failed:
      return "Failed";
    case phase::outdated:
      return "Outdated";
  }
  return "";
}

bool is_terminal(phase p) { return p == phase::succeeded || p == phase::failed || p == phase::outdated; }

std::optional<phase> controller_phase(const controller_view& runner, const pod_observation& pod) {
  if (is_terminal(runner.current)) return std::nullopt;
  if (runner.deleting) return std::nullopt;
  if (pod.exists && pod.runner_exited) {
    if (pod.exit_code == 0) return phase::succeeded;
    if (pod.exit_code == outdated_exit_code) return phase::outdated;
    // Other failures go through on_pod_failure: a retry or Failed.
    return std::nullopt;
  }
  if (runner.current == phase::unset) return phase::pending;
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
  if (runner.current == phase::running && runner.recorded_job_id == job_id)
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
