#include "actors/runner/events.hpp"

namespace octorun::runner {
namespace {

std::string job_text(const transition_detail& d) {
  std::string s = "job " + std::to_string(d.job_id);
  if (!d.job_name.empty()) s += " \"" + d.job_name + "\"";
  if (!d.repository.empty()) s += " of " + d.repository;
  return s;
}

std::string with_message(std::string note, const transition_detail& d) {
  if (!d.message.empty()) note += ": " + d.message;
  return note;
}

}  // namespace

std::optional<runner_event> event_for_transition(model::runner_phase from, model::runner_phase to,
                                                 const transition_detail& detail) {
  if (from == to || to == model::runner_phase::unset) return std::nullopt;
  runner_event e;
  e.reason = std::string(to_string(to));
  e.action = "UpdatePhase";
  switch (to) {
    case model::runner_phase::unset:
      return std::nullopt;
    case model::runner_phase::pending:
      e.note = "The runner is starting and waits for a job";
      break;
    case model::runner_phase::running:
      e.note = detail.job_id != 0 ? "GitHub assigned " + job_text(detail) : "GitHub assigned a job";
      break;
    case model::runner_phase::succeeded:
      // The end of a Running runner (its job completed, or its container
      // exited) is not an Event of its own: the Running Event named the
      // job and the runner, and the Runner is deleted right after. A second
      // Normal Event would be one more Kubernetes write per job that tells
      // a reader nothing new. A job whose start was never written (it
      // completed first) gets this one instead, so one Event names each job.
      if (from == model::runner_phase::running) return std::nullopt;
      if (detail.job_id != 0)
        e.note = with_message("The runner finished " + job_text(detail), detail);
      else if (detail.exit_code >= 0)
        e.note = "The runner exited with code " + std::to_string(detail.exit_code);
      else
        e.note = with_message("The runner finished", detail);
      break;
    case model::runner_phase::failed:
      e.warning = true;
      e.note = with_message("The runner failed", detail);
      break;
    case model::runner_phase::outdated:
      e.warning = true;
      e.note = "GitHub refused the runner as deprecated (exit code " + std::to_string(outdated_exit_code) +
               ", or its termination message): its RunnerSet makes no new runners of this template "
               "until it names a newer runner image (condition RunnerVersionCurrent)";
      break;
  }
  return e;
}

runner_event event_for_pod_retry(int exit_code, int failure, int max_failures,
                                 std::int64_t retry_in_seconds) {
  runner_event e;
  e.warning = true;
  e.reason = "PodFailed";
  e.action = "RecreatePod";
  e.note = "The runner container exited with code " + std::to_string(exit_code) + " (failure " +
           std::to_string(failure) + " of " + std::to_string(max_failures) + "); recreating the pod";
  e.note += retry_in_seconds > 0 ? " in " + std::to_string(retry_in_seconds) + " s" : " now";
  return e;
}

runner_event event_for_registration_failure(const std::string& why) {
  return {
      true, "RegistrationFailed", "Register",
      "GitHub refused to register the runner (JIT configuration): " + why + "; asking again after a backoff"};
}

}  // namespace octorun::runner
