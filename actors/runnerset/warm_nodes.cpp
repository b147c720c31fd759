#include "actors/runnerset/warm_nodes.hpp"

#include <rapidjson/document.h>

#include <memory>

#include "actors/runner/children.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "model/naming.hpp"

namespace octorun::runnerset {
namespace {

using json::allocator;
using rapidjson::Value;

constexpr const char* buffer_api = "autoscaling.x-k8s.io/v1beta1";

// What a scheduler simulation reads of a pod spec (nothing of the
// environment, volumes, probes or the JIT Secret).
constexpr const char* pod_fields[] = {"nodeSelector",      "affinity",         "tolerations",
                                      "priorityClassName", "runtimeClassName", "topologySpreadConstraints"};
// And of each container: an image (the API requires one), its resources, and
// an init container's restartPolicy (a native sidecar's requests add up).
constexpr const char* container_fields[] = {"name", "image", "resources", "restartPolicy"};

Value containers_shape(const Value& from, allocator& a) {
  Value out(rapidjson::kArrayType);
  for (const auto& c : from.GetArray()) {
    if (!c.IsObject()) continue;
    Value shape(rapidjson::kObjectType);
    for (const char* field : container_fields)
      if (const auto* v = json::find_value(c, field))
        shape.AddMember(rapidjson::StringRef(field), Value(*v, a), a);
    out.PushBack(shape, a);
  }
  return out;
}

// metadata: name, namespace, the set's and variant's labels, owned by the set.
Value metadata(const model::runnerset& set, const model::effective_variant& v, allocator& a) {
  Value meta(rapidjson::kObjectType);
  meta.AddMember("name", json::string_value(warm_nodes_name(set.metadata.name, v.name), a), a);
  meta.AddMember("namespace", json::string_value(set.metadata.namespace_, a), a);
  Value labels(rapidjson::kObjectType);
  labels.AddMember(rapidjson::StringRef(model::label_runnerset), json::string_value(set.metadata.name, a), a);
  labels.AddMember(rapidjson::StringRef(model::label_variant), json::string_value(v.name, a), a);
  meta.AddMember("labels", labels, a);
  meta.AddMember(
      "ownerReferences",
      json::controller_reference(model::api_version, "RunnerSet", set.metadata.name, set.metadata.uid, a), a);
  return meta;
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

  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("apiVersion", "v1", a);
  d.AddMember("kind", "PodTemplate", a);
  d.AddMember("metadata", metadata(set, v, a), a);
  Value spec_shape(rapidjson::kObjectType);
  for (const char* field : {"containers", "initContainers"})
    if (const auto* c = json::find_value(*pod_spec, field); c != nullptr && c->IsArray())
      spec_shape.AddMember(rapidjson::StringRef(field), containers_shape(*c, a), a);
  for (const char* field : pod_fields)
    if (const auto* f = json::find_value(*pod_spec, field))
      spec_shape.AddMember(rapidjson::StringRef(field), Value(*f, a), a);
  // The template's own labels (an affinity or a spread may select them),
  // not the runner's name.
  Value labels(rapidjson::kObjectType);
  if (const auto* meta = json::find_value(*pod, "metadata"))
    if (const auto* l = json::find_value(*meta, "labels"); l != nullptr && l->IsObject())
      for (const auto& m : l->GetObject())
        if (std::string_view(m.name.GetString(), m.name.GetStringLength()) != model::label_runner)
          labels.AddMember(Value(m.name, a), Value(m.value, a), a);
  Value tmpl(rapidjson::kObjectType);
  Value tmpl_meta(rapidjson::kObjectType);
  tmpl_meta.AddMember("labels", labels, a);
  tmpl.AddMember("metadata", tmpl_meta, a);
  tmpl.AddMember("spec", spec_shape, a);
  d.AddMember("template", tmpl, a);
  return json::write(d);
}

std::string capacity_buffer_json(const model::runnerset& set, const model::effective_variant& v,
                                 std::int32_t chunks) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("apiVersion", rapidjson::StringRef(buffer_api), a);
  d.AddMember("kind", "CapacityBuffer", a);
  d.AddMember("metadata", metadata(set, v, a), a);
  Value spec(rapidjson::kObjectType);
  Value ref(rapidjson::kObjectType);
  ref.AddMember("name", json::string_value(warm_nodes_name(set.metadata.name, v.name), a), a);
  spec.AddMember("podTemplateRef", ref, a);
  spec.AddMember("replicas", std::max(0, chunks), a);
  d.AddMember("spec", spec, a);
  return json::write(d);
}

}  // namespace octorun::runnerset
