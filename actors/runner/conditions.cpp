#include "actors/runner/conditions.hpp"

#include "actors/runner/jit_conflict.hpp"
#include "model/conditions.hpp"

namespace octorun::runner {
namespace {

model::condition make(const char* type, bool status, const char* reason, const char* message) {
  model::condition c;
  c.type = type;
  c.status = status ? "True" : "False";
  c.reason = reason;
  c.message = message;
  return c;
}

}  // namespace

std::vector<model::condition> runner_conditions(const std::vector<model::condition>& current,
                                                const runner_condition_facts& facts, std::string_view now,
                                                std::int64_t generation) {
  auto out = current;
  auto registered = facts.registered
                        ? make(condition_registered, true, "JitConfigStored",
                               "GitHub registered the runner; its JIT configuration is in its Secret")
                        : make(condition_registered, false, "NotRegistered", "not registered on GitHub yet");
  if (!facts.registered && !facts.registration_failure.empty()) {
    registered.reason = registration_failed_reason;
    registered.message = facts.registration_failure;
  }
  if (!facts.registered && !facts.name_taken.empty()) {
    registered.reason = name_taken_reason;
    registered.message = facts.name_taken;
  }
  registered.observed_generation = generation;
  model::set_condition(out, std::move(registered), now);
  auto ready =
      facts.pod_ready ? make(condition_pod_ready, true, "PodReady", "the runner's pod is ready")
      : facts.pod_failed
          ? make(condition_pod_ready, false, "PodFailed", "the runner container exited with an error")
          : make(condition_pod_ready, false, "PodNotReady", "the runner's pod is not ready");
  ready.observed_generation = generation;
  model::set_condition(out, std::move(ready), now);
  return out;
}

}  // namespace octorun::runner
