// Turns what the Runner actor holds (its Runner, Pod and JIT Secret as the
// watches last showed them, plus its own memory) into the observation that
// next_step() decides on. Pure.
#pragma once

#include <chrono>
#include <optional>

#include "actors/runner/children.hpp"
#include "actors/runner/next_step.hpp"
#include "adapters/kube/object.hpp"
#include "model/types.hpp"

namespace octorun::runner {

struct actor_memory {
  github_removal removal = github_removal::not_tried;
  // The JIT configuration GitHub generated, until its Secret is seen.
  std::optional<jit_config> unstored_jit;
  std::chrono::steady_clock::time_point retry_not_before{};
  bool pod_seen = false;  // a pod of this Runner was watched or created
};

// What the Pod says about the runner container.
pod_observation observe_pod(const kube::object& pod);

// `runner_object` is the Runner as read, `runner` its typed view.
observation observe(const kube::object& runner_object, const model::runner& runner, const kube::object& pod,
                    const kube::object& secret, const actor_memory& memory,
                    std::chrono::steady_clock::time_point now);

// The status.failures entry recorded for the pod with this uid, if any.
bool failure_recorded_for(const kube::object& runner_object, std::string_view pod_uid);

}  // namespace octorun::runner
