// Turns what the Runner actor holds (its Runner, Pod and JIT Secret as the
// watches or its own writes last showed them, all typed values, plus its
// own memory) into the observation that next_step() decides on. Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "actors/runner/children.hpp"
#include "actors/runner/next_step.hpp"
#include "model/children.hpp"
#include "model/types.hpp"

namespace octorun::runner {

struct actor_memory {
  github_removal removal = github_removal::not_tried;
  // The JIT configuration GitHub generated, until its Secret is seen.
  std::optional<jit_config> unstored_jit;
  // GitHub may hold a registration this actor does not know of
  // (observation::registration_unknown): an earlier actor's, this one's
  // whose answer was lost; found_runner_id: what looking it up found.
  bool earlier_registration_possible = true;  // until the set says it made the Runner
  bool jit_answer_lost = false;
  std::int64_t found_runner_id = 0;
  std::chrono::steady_clock::time_point retry_not_before{};
  bool pod_seen = false;                                    // a pod of this Runner was watched or created
  std::chrono::steady_clock::time_point pod_seen_since{};   // a pod of this Runner was first seen or made
  std::chrono::steady_clock::time_point pod_ready_since{};  // unset: its pod is not ready (or none)
  // The server answered this actor's release of the finalizer: a watch event
  // older than that answer may still list it (observation::has_finalizer).
  bool finalizer_released = false;
  // Why GitHub refused the last JIT request (credentials, scope, labels,
  // runner group); empty once one succeeds. Asked again from
  // registration_retry_at on.
  std::string registration_failure{};
  std::chrono::steady_clock::time_point registration_retry_at{};
  // GitHub holds the Runner's name for a runner not shown to be its own
  // (jit_conflict.hpp give_up_the_name): why, for its Failed status.
  std::string name_taken{};
};

// What the Pod says about the runner container (`pod` null: no pod).
pod_observation observe_pod(const model::runner_pod* pod);

// `pod` and `secret` are null when the Runner has none.
observation observe(const model::runner& runner, const model::runner_pod* pod,
                    const model::jit_secret* secret, const actor_memory& memory,
                    std::chrono::steady_clock::time_point now);

// The status.failures entry recorded for the pod with this uid, if any.
bool failure_recorded_for(const model::runner& runner, std::string_view pod_uid);

}  // namespace octorun::runner
