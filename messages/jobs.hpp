// Job messages produced by both GitHub intakes (the scale-set listener and the
// webhook) and consumed by the RunnerSet/Runner actors. Plain structs: an
// intake fills what its source knows and leaves the rest empty/zero. Both
// intakes hand them to the controller's job router, which sends each to its
// RunnerSet's actor (actors/controller/job_routing.hpp, actors/README.md); a
// listener sends each scale-set message whole, as one session_message.
//
//   listener (scale-set protocol)      webhook (workflow_job)
//   JobAvailable   -> job_available    action=queued      -> job_available
//   JobAssigned    -> job_assigned     (no equivalent)
//   JobStarted     -> job_started      action=in_progress -> job_started
//   JobCompleted   -> job_completed    action=completed   -> job_completed
#pragma once

#include <caf/all.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace octorun::messages {

enum class job_source : std::uint8_t { listener, webhook };
inline const char* to_string(job_source s) { return s == job_source::listener ? "listener" : "webhook"; }

// What both intakes know about a job.
struct job_info {
  job_source source = job_source::webhook;
  // Webhook: workflow_job.id. Listener: runnerRequestId (the id acquire-jobs takes).
  std::int64_t job_id = 0;
  std::string github_job_id;      // listener: the service's jobId string; webhook: id as text
  std::int64_t scale_set_id = 0;  // listener only
  std::string repository;         // "owner/repo"
  // The GitHub server the job is on, as model::server_identity names it
  // ("https://github.com", "https://ghes.example:8443"). Webhook: from
  // repository.html_url; sweep: the sweeping set's server. Empty (a
  // listener's, whose session names its set): no server routing needs.
  std::string server;
  // Webhook: the GitHub App installation the delivery names (installation.id;
  // GitHub adds it only to an App's own deliveries); sweep: the sweeping
  // set's, when its credentials are an App's. 0: none named.
  std::int64_t installation_id = 0;
  // Webhook: the RunnerClass whose intake path the delivery came on, signed
  // with that class's webhook secret: its demand goes only to the class's
  // sets. Empty: the manager's own path and secret (and every listener's or
  // sweep's job).
  std::string runner_class;
  std::string workflow_ref;  // listener: jobWorkflowRef; webhook: workflow_name@head_branch
  std::int64_t run_id = 0;
  std::vector<std::string> labels;  // the job's runs-on labels
  std::string display_name;
  // When GitHub queued, started and completed the job, in seconds since the
  // epoch (0: the message does not say). Webhook: created_at, started_at,
  // completed_at; listener: queueTime, runnerAssignTime, finishTime.
  std::int64_t queued_at = 0;
  std::int64_t started_at = 0;
  std::int64_t completed_at = 0;
  // Found by the sweep of GitHub's queue (webhook intake), not delivered: a
  // repeat of what a set counts already is no bad input.
  bool swept = false;
};

// Demand: a job is waiting for a runner (JobAvailable / workflow_job queued).
struct job_available {
  job_info job;
};

// The service assigned the job to the scale set; a runner has yet to pick it up.
struct job_assigned {
  job_info job;
};

// A named runner picked the job up: only this sets a Runner's phase to Running.
struct job_started {
  job_info job;
  std::string runner_name;
  std::int64_t runner_id = 0;
};

// The job ended; `result` is the conclusion (success, failure, canceled, ...).
struct job_completed {
  job_info job;
  std::string runner_name;
  std::int64_t runner_id = 0;
  std::string result;
};

using job_message = std::variant<job_available, job_assigned, job_started, job_completed>;

// Scale-set statistics that come with every session and message.
struct job_statistics {
  std::int64_t scale_set_id = 0;
  std::int64_t total_available_jobs = 0;
  std::int64_t total_acquired_jobs = 0;
  std::int64_t total_assigned_jobs = 0;  // the scaling signal
  std::int64_t total_running_jobs = 0;
  std::int64_t total_registered_runners = 0;
  std::int64_t total_busy_runners = 0;
  std::int64_t total_idle_runners = 0;
};

// One message of a scale set's session (or the statistics its opening
// reports): the job messages in GitHub's order and the statistics that came
// with them. A listener hands it on whole, and its set applies all of it
// before it plans again: a JobCompleted heeded before the statistics that
// stop counting its job frees a runner while the job still counts, and the
// plan makes a runner for nothing.
struct session_message {
  std::string runner_set;  // the RunnerSet ("namespace/name") whose listener received it
  std::vector<job_message> jobs;
  std::optional<job_statistics> statistics;  // none (a message of an unknown type): demand is not touched
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_info& x) {
  return f(caf::meta::type_name("job_info"), x.source, x.job_id, x.github_job_id, x.scale_set_id,
           x.repository, x.server, x.installation_id, x.runner_class, x.workflow_ref, x.run_id, x.labels,
           x.display_name, x.queued_at, x.started_at, x.completed_at);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_available& x) {
  return f(caf::meta::type_name("job_available"), x.job);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_assigned& x) {
  return f(caf::meta::type_name("job_assigned"), x.job);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_started& x) {
  return f(caf::meta::type_name("job_started"), x.job, x.runner_name, x.runner_id);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_completed& x) {
  return f(caf::meta::type_name("job_completed"), x.job, x.runner_name, x.runner_id, x.result);
}

// Sends whichever alternative `m` holds to `dst` as its own message type
// (to a typed handle, each alternative is checked against its interface).
template <class Handle>
void send_job_message(const Handle& dst, job_message m) {
  std::visit([&](auto& x) { caf::anon_send(dst, std::move(x)); }, m);
}

// The job of any alternative.
inline const job_info& job_of(const job_message& m) {
  return std::visit([](const auto& x) -> const job_info& { return x.job; }, m);
}

// What a RunnerSet's credentials are, as its actor tells the job router
// each time it loads them: the router sends a delivery that names an App
// installation only to the sets whose credentials are that installation.
struct set_credentials {
  std::string runner_set;                // "namespace/name"
  std::int64_t app_installation_id = 0;  // 0: a personal access token
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, set_credentials& x) {
  return f(caf::meta::type_name("set_credentials"), x.runner_set, x.app_installation_id);
}

}  // namespace octorun::messages

// Local only: a std::variant has no CAF inspector in 0.17.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::messages::session_message)
