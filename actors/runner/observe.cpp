#include "actors/runner/observe.hpp"

#include <algorithm>

#include "adapters/common/json.hpp"
#include "adapters/kube/finalizers.hpp"
#include "model/naming.hpp"

namespace octorun::runner {

pod_observation observe_pod(const kube::object& pod) {
  pod_observation out;
  if (!pod) return out;
  out.exists = true;
  out.deleting = !pod.deletion_timestamp.empty();
  out.marked_busy = pod.label(model::label_busy) == "true";
  const auto* status = pod.member("status");
  if (status == nullptr) return out;
  if (const auto* conditions = json::find_value(*status, "conditions"); conditions && conditions->IsArray())
    for (const auto& c : conditions->GetArray())
      if (json::str(c, "type") == "Ready") out.ready = json::str(c, "status") == "True";
  if (const auto* cs = json::find_value(*status, "containerStatuses"); cs && cs->IsArray()) {
    for (const auto& c : cs->GetArray()) {
      if (json::str(c, "name") != runner_container) continue;
      const auto* state = json::find_value(c, "state");
      const auto* terminated = state ? json::find_value(*state, "terminated") : nullptr;
      if (terminated != nullptr && terminated->IsObject()) {
        out.runner_exited = true;
        out.exit_code = static_cast<int>(json::i64(*terminated, "exitCode", 1));
      }
    }
  }
  // A pod that failed or succeeded as a whole without a container status
  // (evicted, rejected by the node) ended the runner too.
  auto phase = json::str(*status, "phase");
  if (!out.runner_exited && (phase == "Failed" || phase == "Succeeded")) {
    out.runner_exited = true;
    out.exit_code = phase == "Succeeded" ? 0 : 1;
  }
  return out;
}

bool failure_recorded_for(const kube::object& runner_object, std::string_view pod_uid) {
  const auto* status = runner_object.member("status");
  const auto* failures = status ? json::find_value(*status, "failures") : nullptr;
  if (pod_uid.empty() || failures == nullptr || !failures->IsArray()) return false;
  return std::any_of(failures->Begin(), failures->End(),
                     [&](const rapidjson::Value& f) { return json::str(f, "podUID") == pod_uid; });
}

observation observe(const kube::object& runner_object, const model::runner& runner, const kube::object& pod,
                    const kube::object& secret, const actor_memory& memory,
                    std::chrono::steady_clock::time_point now) {
  observation o;
  o.current = parse_phase(runner.status.phase).value_or(phase::unset);
  o.deleting = runner.metadata.deleting;
  o.has_finalizer = kube::has_finalizer(runner_object, finalizer);
  o.has_job = runner.status.job.has_value() && runner.status.job->id != 0;
  o.failures = static_cast<int>(runner.status.failures.size());
  o.status_pod_ready = runner.status.pod_ready;
  o.secret_exists = static_cast<bool>(secret);
  o.github_runner_id = runner.status.runner_id;
  if (!secret && memory.unstored_jit) {
    o.jit_unstored = true;
    o.github_runner_id = memory.unstored_jit->runner_id;
  }
  if (secret) {
    if (auto jit = read_jit_secret(*secret.doc)) {
      o.github_runner_id = jit->runner_id;
      o.status_registration_stale = runner.status.runner_id != jit->runner_id;
    }
  }
  o.pod = observe_pod(pod);
  o.pod_failure_recorded = pod && failure_recorded_for(runner_object, pod.uid);
  o.removal = memory.removal;
  o.retry_not_before = memory.retry_not_before;
  o.pod_seen = memory.pod_seen || o.status_pod_ready;
  o.now = now;
  return o;
}

}  // namespace octorun::runner
