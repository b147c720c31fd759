#include "actors/runner/observe.hpp"

#include <algorithm>

#include "actors/runner/conditions.hpp"
#include "actors/runner/jit_conflict.hpp"
#include "model/naming.hpp"

namespace octorun::runner {

pod_observation observe_pod(const model::runner_pod* pod) {
  pod_observation out;
  if (pod == nullptr) return out;
  out.exists = true;
  out.deleting = pod->metadata.deleting;
  if (auto busy = pod->metadata.labels.find(model::label_busy); busy != pod->metadata.labels.end())
    out.marked_busy = busy->second == "true";
  out.ready = pod->ready;
  for (const auto& c : pod->containers)
    if (c.name == runner_container && c.terminated) {
      out.runner_exited = true;
      // GitHub refused it as deprecated: run.sh may still exit 0 (or 1), but
      // the runner is outdated, not succeeded or failing.
      out.exit_code = c.deprecated ? outdated_exit_code : c.exit_code;
    }
  // A pod that failed or succeeded as a whole without a container status
  // (evicted, rejected by the node) ended the runner too.
  if (!out.runner_exited && (pod->phase == "Failed" || pod->phase == "Succeeded")) {
    out.runner_exited = true;
    out.exit_code = pod->phase == "Succeeded" ? 0 : 1;
  }
  return out;
}

bool failure_recorded_for(const model::runner& runner, std::string_view pod_uid) {
  const auto& failures = runner.status.failures;
  return !pod_uid.empty() &&
         std::any_of(failures.begin(), failures.end(),
                     [&](const model::runner_failure& f) { return f.pod_uid == pod_uid; });
}

observation observe(const model::runner& runner, const model::runner_pod* pod,
                    const model::jit_secret* secret, const actor_memory& memory,
                    std::chrono::steady_clock::time_point now) {
  observation o;
  o.current = runner.status.phase;
  o.deleting = runner.metadata.deleting;
  o.has_finalizer = model::has_finalizer(runner.metadata, finalizer) && !memory.finalizer_released;
  o.has_job = runner.status.job.has_value() && runner.status.job->id != 0;
  o.failures = static_cast<int>(runner.status.failures.size());
  o.status_pod_ready = runner.status.pod_ready;
  o.secret_exists = secret != nullptr;
  o.github_runner_id = runner.status.runner_id;
  if (secret == nullptr && memory.unstored_jit) {
    o.jit_unstored = true;
    o.github_runner_id = memory.unstored_jit->runner_id;
  }
  if (o.github_runner_id == 0) o.github_runner_id = memory.found_runner_id;
  o.registration_unknown = memory.earlier_registration_possible || memory.jit_answer_lost;
  // A Runner that gave its name up holds no registration of its own under
  // it: the runner a lookup by name would find is the one it left alone.
  if (runner.status.reason == name_taken_reason) o.registration_unknown = false;
  o.name_taken = !memory.name_taken.empty();
  if (secret != nullptr && secret->registration) {
    o.github_runner_id = secret->registration->runner_id;
    o.status_registration_stale = runner.status.runner_id != secret->registration->runner_id;
  }
  o.pod = observe_pod(pod);
  o.pod_failure_recorded = pod != nullptr && failure_recorded_for(runner, pod->metadata.uid);
  o.removal = memory.removal;
  o.retry_not_before = memory.retry_not_before;
  o.pod_seen = memory.pod_seen || o.status_pod_ready;
  o.pod_seen_since = memory.pod_seen_since;
  o.pod_ready_since = memory.pod_ready_since;
  o.registration_failure = memory.registration_failure;
  o.registration_retry_at = memory.registration_retry_at;
  for (const auto& c : runner.status.conditions)
    if (c.type == condition_registered && c.status == "False" && c.reason == registration_failed_reason)
      o.registration_failure_published = c.message == memory.registration_failure;
  o.now = now;
  return o;
}

}  // namespace octorun::runner
