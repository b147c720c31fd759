// The RunnerSet actor applying and deleting its warm-node objects
// (warm_nodes.hpp) through the Kubernetes request pool, and recording how
// each call ended; plan_warm_nodes decides from that record.
#include <spdlog/spdlog.h>

#include "actors/kinds.hpp"
#include "actors/runnerset/set_state.hpp"
#include "adapters/kube/protocol.hpp"

namespace octorun::runnerset::detail {
namespace {

kube::resource warm_resource_of(std::string_view key) {
  return key_kind(key) == "CapacityBuffer" ? kinds::capacity_buffers() : kinds::pod_templates();
}

void warm_nodes_failed(self_ptr self, const std::string& key, std::string why, bool deleting) {
  auto& w = self->state.world.warm_nodes;
  spdlog::warn("runnerset {}: {} {}: {}", id(self), deleting ? "deleting" : "applying", key, why);
  w.errors[key] = std::move(why);
  w.retry_at = self->clock().now() + warm_nodes_retry;
  mark_dirty(self);
}

void warm_nodes_outcome(self_ptr self, const std::string& key, const kube::object_result& r, bool deleting,
                        const std::string& body) {
  auto& w = self->state.world.warm_nodes;
  const bool buffer = key_kind(key) == "CapacityBuffer";
  if (r || (deleting && r.error().not_found())) {
    if (deleting) {
      w.deleted.insert(key);
      w.applied.erase(key);
    } else {
      w.applied[key] = body;
      w.deleted.erase(key);
      if (buffer && w.unserved) spdlog::info("runnerset {}: the cluster serves CapacityBuffer now", id(self));
      if (buffer) w.unserved = false;
    }
    w.errors.erase(key);
    mark_dirty(self);
    return;
  }
  // An apply creates what is missing: a 404 says the API itself is not
  // served (no CRD, or Karpenter without its feature gate). Warm nodes are
  // off until it is; told once, tried again seldom.
  if (buffer && !deleting && r.error().not_found()) {
    if (!w.unserved)
      spdlog::warn(
          "runnerset {}: the cluster does not serve capacitybuffers.autoscaling.x-k8s.io/v1beta1: warm "
          "nodes are off (WarmNodesReady)",
          id(self));
    w.unserved = true;
    w.errors[key] = kube::to_string(r.error());
    w.retry_at = self->clock().now() + warm_nodes_unserved_retry;
    mark_dirty(self);
    return;
  }
  warm_nodes_failed(self, key, kube::to_string(r.error()), deleting);
}

}  // namespace

void apply_warm_nodes(self_ptr self, const std::string& key, const std::string& body) {
  auto& st = self->state;
  request_in_flight<kube::object_result>(
      self, {action_kind::apply_warm_nodes, key}, st.cfg.kube,
      [=](kube::object_result& r) { warm_nodes_outcome(self, key, r, false, body); },
      [=](const std::string& why) { warm_nodes_failed(self, key, why, false); },
      kube::patch_request{warm_resource_of(key), st.cfg.ns, std::string(key_name(key)),
                          kube::patch_type::apply, body, ""});
}

void delete_warm_nodes(self_ptr self, const std::string& key) {
  auto& st = self->state;
  request_in_flight<kube::object_result>(
      self, {action_kind::delete_warm_nodes, key}, st.cfg.kube,
      [=](kube::object_result& r) { warm_nodes_outcome(self, key, r, true, {}); },
      [=](const std::string& why) { warm_nodes_failed(self, key, why, true); },
      kube::delete_request{warm_resource_of(key), st.cfg.ns, std::string(key_name(key)), {}});
}

}  // namespace octorun::runnerset::detail
