#include "bench/loadtest/placement_watch.hpp"

#include <rapidjson/document.h>

#include "actors/kinds.hpp"
#include "adapters/kube/client.hpp"
#include "adapters/kube/informer.hpp"
#include "bench/common/lifecycle.hpp"
#include "bench/common/reflector_thread.hpp"
#include "common/json.hpp"

namespace octorun::loadtest {
namespace {

void first(double& slot, double now) {
  if (slot == 0) slot = now;
}

// status.conditions' `type` entry when its status is "True"; else null.
const rapidjson::Value* true_condition(const kube::object& o, std::string_view type) {
  const auto* status = o.member("status");
  const auto* conditions = status ? json::find_value(*status, "conditions") : nullptr;
  if (conditions == nullptr || !conditions->IsArray()) return nullptr;
  for (const auto& c : conditions->GetArray())
    if (c.IsObject() && json::str(c, "type") == type && json::str(c, "status") == "True") return &c;
  return nullptr;
}

bool condition_true(const kube::object& o, std::string_view type) {
  return true_condition(o, type) != nullptr;
}

bool has_annotation(const kube::object& o, const char* key) {
  const auto* metadata = o.member("metadata");
  const auto* annotations = metadata ? json::find_value(*metadata, "annotations") : nullptr;
  return annotations != nullptr && annotations->IsObject() && annotations->HasMember(key);
}

std::vector<std::string> images_of(const rapidjson::Value* spec) {
  std::vector<std::string> images;
  for (const char* list : {"initContainers", "containers"}) {
    const auto* containers = spec ? json::find_value(*spec, list) : nullptr;
    if (containers == nullptr || !containers->IsArray()) continue;
    for (const auto& c : containers->GetArray())
      if (c.IsObject() && !json::str(c, "image").empty()) images.push_back(json::str(c, "image"));
  }
  return images;
}

bool a_container_running(const kube::object& o) {
  const auto* status = o.member("status");
  const auto* containers = status ? json::find_value(*status, "containerStatuses") : nullptr;
  if (containers == nullptr || !containers->IsArray()) return false;
  for (const auto& c : containers->GetArray()) {
    const auto* state = c.IsObject() ? json::find_value(c, "state") : nullptr;
    if (state != nullptr && state->IsObject() && state->HasMember("running")) return true;
  }
  return false;
}

}  // namespace

placement_watch::placement_watch(const kube::config& cfg, const std::string& ns,
                                 const std::string& pod_selector, const std::string& node_selector,
                                 bool mark_cached_pulls)
    : ns_(ns) {
  if (mark_cached_pulls) patcher_ = std::make_unique<kube::client>(cfg);
  auto reflect = [&](kube::resource res, std::string in_ns, std::string labels, bool pods) {
    kube::reflector_callbacks cb;
    auto handle = [this, pods](const kube::object& obj, bool deleted) {
      pods ? on_pod(obj, deleted) : on_node(obj, deleted);
    };
    cb.replaced = [handle](kube::object_list l) {
      for (auto& item : l.items) handle(item, false);
    };
    cb.event = [handle](kube::watch_event ev) {
      if (ev.type == kube::event_type::error) return;
      handle(ev.obj, ev.type == kube::event_type::deleted);
    };
    threads_.push_back(bench::start_reflector(cfg, std::move(res), std::move(in_ns), std::move(labels),
                                              std::move(cb), stop_));
  };
  reflect({"", "v1", "pods", true}, ns, pod_selector, true);
  reflect({"", "v1", "nodes", false}, "", node_selector, false);
}

placement_watch::~placement_watch() {
  stop_ = true;
  for (auto& t : threads_) t.join();
}

void placement_watch::on_pod(const kube::object& o, bool deleted) {
  std::string runner(o.label("octorun.io/runner"));
  if (runner.empty()) return;
  const double now = bench::unix_ms_now();
  const auto* spec = o.member("spec");
  std::string node = spec != nullptr ? json::str(*spec, "nodeName") : std::string();
  const auto* pulled = true_condition(o, "octorun.io/ImagesPulled");
  bool mark = false;
  {
    std::lock_guard lock(mu_);
    auto& m = pods_[runner];
    first(m.created, now);
    if (!node.empty()) m.node = node;
    if (condition_true(o, "PodScheduled")) first(m.scheduled, now);
    if (condition_true(o, "PodReadyToStartContainers")) first(m.sandbox_ready, now);
    if (pulled != nullptr) {
      first(m.images_pulled, now);
      m.pull = json::str(*pulled, "reason");
    }
    if (a_container_running(o)) first(m.running, now);
    if (deleted) first(m.deleted, now);
    if (patcher_ && !deleted) {
      pod_images seen{node, images_of(spec), pulled != nullptr,
                      has_annotation(o, image_cached_annotation) || marked_.count(std::string(o.name)) > 0};
      mark = images_.observe(seen);
      if (mark) marked_.insert(std::string(o.name));
    }
  }
  // Outside the lock: the patch's own event comes back on this thread's
  // watch; a failed one leaves the pull cold.
  if (mark)
    (void)patcher_->patch(
        kinds::pods(), ns_, o.name, kube::patch_type::merge,
        std::string(R"({"metadata":{"annotations":{")") + image_cached_annotation + R"(":"true"}}})");
}

void placement_watch::on_node(const kube::object& o, bool deleted) {
  const double now = bench::unix_ms_now();
  std::lock_guard lock(mu_);
  auto& m = nodes_[std::string(o.name)];
  first(m.created, now);
  if (condition_true(o, "Ready")) first(m.ready, now);
  if (deleted) first(m.deleted, now);
  if (deleted) images_.node_gone(std::string(o.name));
}

std::map<std::string, pod_marks> placement_watch::pods() const {
  std::lock_guard lock(mu_);
  return pods_;
}

std::map<std::string, node_marks> placement_watch::nodes() const {
  std::lock_guard lock(mu_);
  return nodes_;
}

}  // namespace octorun::loadtest
