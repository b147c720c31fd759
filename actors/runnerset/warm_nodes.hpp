// Warm nodes (docs/scaling.md "Warm nodes"): spare node capacity shaped like
// a variant's runner, asked of the node autoscaler through SIG Autoscaling's
// CapacityBuffer (autoscaling.x-k8s.io/v1beta1), which Karpenter and the
// cluster autoscaler implement. Per variant with a start-time target, once a
// runner pod of it waited for a node, the set keeps two objects in its
// namespace, owned by the RunnerSet (deleting the set deletes them):
//
// - PodTemplate octorun-warm-<set>[-<variant>]: the variant's runner pod as
//   the Runner actor renders it, reduced to what a scheduler simulation
//   needs (containers with their resources, node selection, tolerations,
//   priority): the shape of one chunk;
// - CapacityBuffer of the same name: podTemplateRef to it, replicas the
//   chunks model::size_warm_nodes asks for.
//
// Bodies are server-side apply patches. Pure and deterministic.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "common/expected.hpp"
#include "model/types.hpp"

namespace octorun::runnerset {

// "octorun-warm-<set>" or "octorun-warm-<set>-<variant>".
std::string warm_nodes_name(std::string_view set, std::string_view variant);
// The keys ("Kind/name", as pod_resources.hpp's) of a variant's two objects.
std::string warm_template_key(std::string_view set, std::string_view variant);
std::string capacity_buffer_key(std::string_view set, std::string_view variant);

// The PodTemplate of one chunk of `variant`'s warm nodes; fails as the
// runner pod would (its template is not an object or has no runner container).
expected<std::string, std::string> warm_template_json(const model::runnerset& set,
                                                      const model::effective_variant& variant);
// The CapacityBuffer asking for `chunks` of them.
std::string capacity_buffer_json(const model::runnerset& set, const model::effective_variant& variant,
                                 std::int32_t chunks);

// What the set knows of its warm-node objects this run (the actor records
// the answers; plan_warm_nodes in plan.hpp decides from it).
struct warm_nodes_state {
  std::map<std::string, std::string> applied;  // key -> the body applied this run
  std::set<std::string> deleted;               // keys deleted (or found gone) this run
  std::map<std::string, std::string> errors;   // key -> why its last apply or delete failed
  // The last CapacityBuffer apply answered 404: the cluster does not serve
  // the API (no CRD, or Karpenter without its CapacityBuffer feature gate).
  bool unserved = false;
  std::chrono::steady_clock::time_point retry_at{};  // what failed is tried again from then
};

// How long a failed apply or delete waits; how long an unserved API does.
inline constexpr std::chrono::seconds warm_nodes_retry{30};
inline constexpr std::chrono::minutes warm_nodes_unserved_retry{10};
// The wake key of those retries.
inline constexpr std::string_view warm_nodes_wake = "warm-nodes";

}  // namespace octorun::runnerset
