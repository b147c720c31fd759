#include "actors/runnerset/warm_nodes.hpp"

#include <rapidjson/document.h>

#include <memory>

#include "actors/runner/children.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/json_writer.hpp"
#include "model/naming.hpp"

namespace octorun::runnerset {
namespace {

constexpr const char* buffer_api = "autoscaling.x-k8s.io/v1beta1";

// What a scheduler simulation reads of a pod spec (nothing of the
// environment, volumes, probes or the JIT Secret).
constexpr const char* pod_fields[] = {"nodeSelector",      "affinity",         "tolerations",
                                      "priorityClassName", "runtimeClassName", "topologySpreadConstraints"};
// And of each container: an image (the API requires one), its resources, and
// an init container's restartPolicy (a native sidecar's requests add up).
constexpr const char* container_fields[] = {"name", "image", "resources", "restartPolicy"};

void write_containers_shape(json::writer& w, const char* key, const rapidjson::Value& from) {
  w.open_array(key);
  for (const auto& c : from.GetArray()) {
    if (!c.IsObject()) continue;
    w.open();
    for (const char* field : container_fields)
      if (const auto* v = json::find_value(c, field)) w.raw_field(field, json::write(*v));
    w.close();
  }
  w.close_array();
}

// metadata: name, namespace, the set's and variant's labels, owned by the set.
void write_metadata(json::writer& w, const model::runnerset& set, const model::effective_variant& v) {
  w.open("metadata").field("name", warm_nodes_name(set.metadata.name, v.name));
  w.field("namespace", set.metadata.namespace_);
  w.open("labels")
      .field(model::label_runnerset, set.metadata.name)
      .field(model::label_variant, v.name)
      .close();
  json::write_controller_reference(w, model::api_version, "RunnerSet", set.metadata.name, set.metadata.uid);
  w.close();
}

std::string key(const char* kind, const std::string& name) { return std::string(kind) + "/" + name; }

}  // namespace

std::string warm_nodes_name(std::string_view set, std::string_view variant) {
  return "octorun-warm-" + std::string(set) + (variant.empty() ? "" : "-" + std::string(variant));
}

std::string warm_template_key(std::string_view set, std::string_view variant) {
  return key("PodTemplate", warm_nodes_name(set, variant));
}

std::string capacity_buffer_key(std::string_view set, std::string_view variant) {
  return key("CapacityBuffer", warm_nodes_name(set, variant));
}

expected<std::string, std::string> warm_template_json(const model::runnerset& set,
                                                      const model::effective_variant& v) {
  // The runner pod as its Runner would render it: the pod configuration's
  // sidecars, service account and defaults included.
  model::runner r;
  r.metadata.name = warm_nodes_name(set.metadata.name, v.name);
  r.metadata.namespace_ = set.metadata.namespace_;
  auto spec = std::make_shared<model::runner_spec>();
  spec->runner_set_name = set.metadata.name;
  spec->variant = v.name;
  spec->template_ = *v.template_;
  spec->pod = v.pod;
  r.spec = std::move(spec);
  auto pod_text = runner::pod_json(r, "");
  if (!pod_text) return unexpected{pod_text.error()};
  auto pod = json::parse(*pod_text, json::sources::stored_json);
  if (!pod || !pod->IsObject()) return unexpected{std::string("the runner pod is not a JSON object")};
  const auto* pod_spec = json::find_value(*pod, "spec");
  if (pod_spec == nullptr || !pod_spec->IsObject())
    return unexpected{std::string("the runner pod has no spec")};

  json::writer w;
  w.open().field("apiVersion", "v1").field("kind", "PodTemplate");
  write_metadata(w, set, v);
  // The template's own labels (an affinity or a spread may select them),
  // not the runner's name.
  w.open("template").open("metadata").open("labels");
  if (const auto* meta = json::find_value(*pod, "metadata"))
    if (const auto* l = json::find_value(*meta, "labels"); l != nullptr && l->IsObject())
      for (const auto& m : l->GetObject())
        if (std::string_view name(m.name.GetString(), m.name.GetStringLength()); name != model::label_runner)
          w.raw_field(name, json::write(m.value));
  w.close().close().open("spec");
  for (const char* field : {"containers", "initContainers"})
    if (const auto* c = json::find_value(*pod_spec, field); c != nullptr && c->IsArray())
      write_containers_shape(w, field, *c);
  for (const char* field : pod_fields)
    if (const auto* f = json::find_value(*pod_spec, field)) w.raw_field(field, json::write(*f));
  return w.close().close().close().str();
}

std::string capacity_buffer_json(const model::runnerset& set, const model::effective_variant& v,
                                 std::int32_t chunks) {
  json::writer w;
  w.open().field("apiVersion", buffer_api).field("kind", "CapacityBuffer");
  write_metadata(w, set, v);
  w.open("spec").open("podTemplateRef").field("name", warm_nodes_name(set.metadata.name, v.name)).close();
  w.field("replicas", std::max(0, chunks));
  return w.close().close().str();
}

}  // namespace octorun::runnerset
