#include "actors/watched.hpp"

#include <spdlog/spdlog.h>

#include "actors/kinds.hpp"
#include "adapters/kube/informer_impl.hpp"
#include "model/parse.hpp"
#include "model/runner_class.hpp"

namespace octorun::watched {
namespace {

template <class T>
std::shared_ptr<const T> parsed(const kube::object& o, expected<T, model::field_errors> r, const char* kind) {
  if (r) return std::make_shared<const T>(std::move(*r));
  // The CRD's schema makes this impossible; never act on it.
  spdlog::error("cannot read {} {}: {}: {}", kind, o.key(), r.error().front().field,
                r.error().front().message);
  return nullptr;
}

template <class Handle>
caf::actor watch(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                 kube::informer_options io, kube::resource res, Handle (*decode)(const kube::object&)) {
  io.res = std::move(res);
  return kube::spawn_typed_informer<Handle>(sys, cfg, std::move(opts), std::move(io), decode);
}

}  // namespace

runnerset_ptr read_runnerset(const kube::object& o) {
  return o ? parsed(o, model::parse_runnerset(*o.doc), "RunnerSet") : nullptr;
}
runner_ptr read_runner(const kube::object& o) {
  return o ? parsed(o, model::parse_runner(*o.doc), "Runner") : nullptr;
}
pod_ptr read_pod(const kube::object& o) {
  return o ? std::make_shared<const model::runner_pod>(model::read_runner_pod(*o.doc)) : nullptr;
}
secret_ptr read_secret(const kube::object& o) {
  return o ? std::make_shared<const model::jit_secret>(model::read_jit_secret_view(*o.doc)) : nullptr;
}

runner_class_ptr read_runner_class(const kube::object& o) {
  return o ? parsed(o, model::parse_runner_class(*o.doc), "RunnerClass") : nullptr;
}
namespace_ptr read_namespace(const kube::object& o) {
  return o ? std::make_shared<const model::namespace_view>(
                 model::namespace_view{model::read_object_meta(*o.doc)})
           : nullptr;
}

caf::actor watch_runnersets(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                            kube::informer_options io) {
  return watch(sys, cfg, std::move(opts), std::move(io), kinds::runnersets(), &read_runnerset);
}
caf::actor watch_runners(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                         kube::informer_options io) {
  return watch(sys, cfg, std::move(opts), std::move(io), kinds::runners(), &read_runner);
}
caf::actor watch_pods(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                      kube::informer_options io) {
  return watch(sys, cfg, std::move(opts), std::move(io), kinds::pods(), &read_pod);
}

caf::actor watch_pods(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                      kube::informer_options io, pod_filter keep) {
  io.res = kinds::pods();
  kube::keep_filter<pod_ptr> kept = [keep = std::move(keep)](const pod_ptr& pod) { return keep(*pod); };
  return kube::spawn_typed_informer<pod_ptr>(sys, cfg, std::move(opts), std::move(io), &read_pod,
                                             std::move(kept));
}

caf::actor watch_runner_classes(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                                kube::informer_options io) {
  return watch(sys, cfg, std::move(opts), std::move(io), kinds::runner_classes(), &read_runner_class);
}
caf::actor watch_namespaces(caf::actor_system& sys, const kube::config& cfg, kube::client_options opts,
                            kube::informer_options io) {
  return watch(sys, cfg, std::move(opts), std::move(io), kube::namespaces(), &read_namespace);
}

}  // namespace octorun::watched
