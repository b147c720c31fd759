// What the manager reads of the objects a Runner owns: its Pod and its JIT
// Secret. The informers keep these lean views instead of the objects (a
// Pod's spec and most of its status, and the Secret's data, are never
// cached): model/parse.hpp decodes them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/runner_version.hpp"
#include "model/types.hpp"

namespace octorun::model {

// The container that runs the GitHub Actions runner (the CRD requires it).
inline constexpr const char* runner_container = "runner";

// A pod's resource requests, in cores and bytes.
struct pod_requests {
  double cpu_cores = 0;
  double memory_bytes = 0;
  bool operator==(const pod_requests&) const = default;
};

// One entry of the Pod's status.containerStatuses.
struct container_state {
  std::string name;
  bool terminated = false;     // state.terminated is set
  std::int32_t exit_code = 0;  // its exitCode (1 when the kubelet gave none)
  // Its termination message says GitHub refused the runner as deprecated,
  // and which version it runs (model/runner_version.hpp); a runner whose
  // run.sh exits 0 after that is known by this alone.
  bool deprecated = false;
  std::optional<runner_version> reported_version;
};

// The metadata the manager reads of an object a Runner owns: identity,
// deletion, and the labels it reads (octorun.io/runnerset, runner, busy;
// model/parse.cpp). Leaner than object_meta: the informers cache a Pod and a
// Secret per Runner.
struct owned_object_meta {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  std::map<std::string, std::string> labels;
  bool deleting = false;  // deletionTimestamp is set
  // Its controller ownerReference is a Runner (kind Runner of api_group):
  // only such a Pod is a set's, whatever its labels say.
  bool owner_is_runner = false;
  // The uid of its controller ownerReference ("" when it has none): the
  // Runner it belongs to. A name alone does not say it: a Runner may be
  // given the name of an earlier one whose children are still there.
  std::string owner_uid;
};

// Whether `child` (a Pod or Secret named after a Runner) belongs to the
// Runner whose metadata.uid is `runner_uid`. The set may give a new Runner
// the name of an earlier one whose children the garbage collector has not
// removed yet: those are not its pod, nor its JIT configuration. A child
// without a controller owner is taken as the Runner's (nothing else makes
// them under its name).
inline bool owned_by(const owned_object_meta& child, std::string_view runner_uid) {
  return child.owner_uid.empty() || child.owner_uid == runner_uid;
}

// Whether a Runner is one the RunnerSet whose metadata.uid is `set_uid`
// made: its controller ownerReference names that RunnerSet. Its label alone
// does not say it: anyone who may create a Runner can write the label, and
// the set's credentials would then register a runner with whatever labels
// and pod that Runner declares. A Runner without a controller owner is not
// the set's (unlike its children: the manager always writes the reference).
inline bool runner_made_by(const object_meta& runner, std::string_view set_uid) {
  return !set_uid.empty() && runner.owner_kind == "RunnerSet" && runner.owner_uid == set_uid;
}

// Whether a RunnerSet being deleted may go on past its Runners: none of
// those the apiserver lists with its label is one it made. A Runner it did
// not make (hand-made, or made while admission was off) is left alone, so
// it must not hold the set's deletion, its scale sets and its finalizer for
// good.
inline bool no_runner_made_by(const std::vector<object_meta>& labelled, std::string_view set_uid) {
  for (const auto& runner : labelled)
    if (runner_made_by(runner, set_uid)) return false;
  return true;
}

// A Runner's Pod: metadata (owned_object_meta), phase, readiness and
// container states.
struct runner_pod {
  owned_object_meta metadata;
  std::string phase;   // status.phase
  bool ready = false;  // the Ready condition is True
  std::vector<container_state> containers;
  // Its way up (seconds since the epoch, 0: not yet or not said): the
  // lastTransitionTime of PodScheduled and of Ready once True, and the
  // runner container's startedAt (its image pulled, running or since ended).
  std::int64_t scheduled_at = 0;
  std::int64_t ready_at = 0;
  std::int64_t runner_started_at = 0;
  // What the scheduler reserves for it (cores, bytes): the containers'
  // requests plus those of native sidecars, or an init container's when
  // larger, plus spec.overhead.
  pod_requests requests;
};

// The JIT configuration GitHub generated for a runner, as its Secret stores it.
struct jit_config {
  std::string encoded;  // the opaque encodedJITConfig GitHub returned
  std::int64_t runner_id = 0;
  std::string runner_name;
};

// The keys of a JIT Secret's data.
inline constexpr const char* jit_key_config = "jitConfig";
inline constexpr const char* jit_key_runner_id = "runnerId";
inline constexpr const char* jit_key_runner_name = "runnerName";

// The GitHub runner a JIT Secret registers.
struct jit_registration {
  std::int64_t runner_id = 0;
  std::string runner_name;
  bool operator==(const jit_registration&) const = default;
};

// A Runner's JIT Secret without its data: only the registration it holds,
// nullopt when it is not a JIT Secret of ours or is damaged.
struct jit_secret {
  owned_object_meta metadata;
  std::optional<jit_registration> registration;
};

}  // namespace octorun::model
