// The Runner's status.conditions (crds/README.md): `Registered` (GitHub
// holds a registration for it: its JIT configuration is stored) and
// `PodReady` (its pod is ready), as standard metav1.Condition fields. Never
// a write of their own: they ride along in the status patches the Runner
// actor makes anyway (Pending, readiness, Running, a pod failure, Failed).
// Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/conditions.hpp"
#include "model/types.hpp"

namespace octorun::runner {

inline constexpr const char* condition_registered = "Registered";
inline constexpr const char* condition_pod_ready = "PodReady";
inline constexpr const char* registration_failed_reason = "RegistrationFailed";

struct runner_condition_facts {
  bool registered = false;
  bool pod_ready = false;
  bool pod_failed = false;  // its runner container exited non-zero (PodReady False, reason PodFailed)
  // Not registered: why GitHub refused its registration (Registered False,
  // reason RegistrationFailed); empty: not asked or not answered yet.
  std::string registration_failure{};
  // Not registered: GitHub holds its name for a runner not its own
  // (Registered False, reason NameTaken: jit_conflict.hpp); empty: not so.
  std::string name_taken{};
};

// `current` with Registered and PodReady set from `facts` (other types kept
// as they are). A condition's lastTransitionTime changes only when its
// status does (then to `now`, RFC 3339); observedGeneration is `generation`.
std::vector<model::condition> runner_conditions(const std::vector<model::condition>& current,
                                                const runner_condition_facts& facts, std::string_view now,
                                                std::int64_t generation);

// The list as status.conditions: model::conditions_json.
using model::conditions_json;

}  // namespace octorun::runner
