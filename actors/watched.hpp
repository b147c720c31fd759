// What the manager watches, as typed values: one informer per kind decodes
// each object once (on its reflector's thread) into the lean value below and
// caches only that; subscribers get one message type per kind and dispatch
// on it. Nobody downstream parses a watched object again.
//
//   kind       informer selects                   value (what is kept)
//   RunnerSet  every one in the namespace         model::runnerset
//   Runner     octorun.io/runnerset label         model::runner
//   Pod        octorun.io/runnerset label         model::runner_pod (phase, readiness, container states),
//                                                 only those a filter keeps (the controller's: a
//                                                 Runner's Pod of a set it knows)
//   RunnerClass every one (cluster-scoped)        model::runner_class
//   Namespace  every one                          model::namespace_view (its labels, for namespaceSelector)
//
// Secrets are not watched: the manager holds no list or watch on them (a
// list or watch returns every Secret's data). A Runner's actor reads its own
// JIT Secret by name and keeps what its create returned, decoded by
// read_secret into model::jit_secret (its registration; never its data).
//
// The same decoders read the objects a write returns, so the Runner actor
// holds one kind of value whether it came from the watch or from a reply.
#pragma once

#include <caf/all.hpp>
#include <functional>
#include <memory>
#include <string>

#include "adapters/kube/informer.hpp"
#include "adapters/kube/protocol.hpp"
#include "model/children.hpp"
#include "model/runner_class.hpp"
#include "model/types.hpp"

namespace octorun::watched {

using runnerset_ptr = std::shared_ptr<const model::runnerset>;
using runner_ptr = std::shared_ptr<const model::runner>;
using pod_ptr = std::shared_ptr<const model::runner_pod>;
using secret_ptr = std::shared_ptr<const model::jit_secret>;
using runner_class_ptr = std::shared_ptr<const model::runner_class>;
using namespace_ptr = std::shared_ptr<const model::namespace_view>;

using runnerset_event = kube::informer_update<runnerset_ptr>;
using runner_event = kube::informer_update<runner_ptr>;
using pod_event = kube::informer_update<pod_ptr>;
using runner_class_event = kube::informer_update<runner_class_ptr>;
using namespace_event = kube::informer_update<namespace_ptr>;

// What takes the RunnerSet and Runner events the controller forwards (the
// state metrics' feed, actors/metrics/metrics_feed.hpp).
using observer = caf::typed_actor<caf::reacts_to<runnerset_event>, caf::reacts_to<runner_event>>;

// The decoders (also for objects read or written directly). Null when the
// object cannot be read: the error is logged, naming the object and field.
runnerset_ptr read_runnerset(const kube::object& o);
runner_ptr read_runner(const kube::object& o);
pod_ptr read_pod(const kube::object& o);
secret_ptr read_secret(const kube::object& o);
runner_class_ptr read_runner_class(const kube::object& o);
namespace_ptr read_namespace(const kube::object& o);

// One typed informer per kind, in `ns` ("" = all) with `label_selector`.
caf::actor watch_runnersets(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                            kube::informer_options io);
caf::actor watch_runners(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                         kube::informer_options io);
caf::actor watch_pods(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                      kube::informer_options io);
// Whether the Pod informer keeps a decoded Pod; one it does not is dropped
// on the reflector's thread, never cached, and one cached that stops being
// kept (its Runner ownerReference removed, relabelled) leaves the cache
// with a DELETED to subscribers (kube::keep_filter).
using pod_filter = std::function<bool(const model::runner_pod&)>;
caf::actor watch_pods(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                      kube::informer_options io, pod_filter keep);
caf::actor watch_runner_classes(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                                kube::informer_options io);
caf::actor watch_namespaces(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                            kube::informer_options io);

}  // namespace octorun::watched

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::watched::runnerset_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::watched::runner_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::watched::pod_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::watched::secret_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::watched::runner_class_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(octorun::watched::namespace_ptr)
