#include "actors/runnerset/runner_object.hpp"

#include <rapidjson/document.h>

#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "model/naming.hpp"
#include "model/pod_config.hpp"

namespace octorun::runnerset {
namespace {

using json::allocator;
using rapidjson::Value;

Value str(const std::string& s, allocator& a) { return json::string_value(s, a); }

}  // namespace

std::string runner_json(const model::runnerset& set, const model::effective_variant& variant,
                        const std::string& suffix) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("apiVersion", Value(model::api_version, a), a);
  d.AddMember("kind", "Runner", a);

  Value meta(rapidjson::kObjectType);
  meta.AddMember("name", str(model::runner_name(set.metadata.name, variant.name, suffix), a), a);
  meta.AddMember("namespace", str(set.metadata.namespace_, a), a);
  Value labels(rapidjson::kObjectType);
  labels.AddMember(Value(model::label_runnerset, a), str(set.metadata.name, a), a);
  labels.AddMember(Value(model::label_variant, a), str(variant.name, a), a);
  meta.AddMember("labels", labels, a);
  // Held from the start (no patch to add it): the Runner actor releases it
  // once GitHub no longer holds the runner; its Secret and Pod then go with
  // it (their ownerReferences, the garbage collector).
  Value finalizers(rapidjson::kArrayType);
  finalizers.PushBack(Value(model::runner_finalizer, a), a);
  meta.AddMember("finalizers", finalizers, a);
  meta.AddMember(
      "ownerReferences",
      json::controller_reference(model::api_version, "RunnerSet", set.metadata.name, set.metadata.uid, a), a);
  d.AddMember("metadata", meta, a);

  Value spec(rapidjson::kObjectType);
  spec.AddMember("scopeURL", str(set.spec.scope_url, a), a);
  spec.AddMember("credentialsSecretName", str(set.spec.credentials_secret_name, a), a);
  if (!set.spec.runner_group.empty()) spec.AddMember("runnerGroup", str(set.spec.runner_group, a), a);
  Value runner_labels(rapidjson::kArrayType);
  for (const auto& l : variant.runner_labels) runner_labels.PushBack(str(l, a), a);
  spec.AddMember("runnerLabels", runner_labels, a);
  spec.AddMember("runnerSetName", str(set.metadata.name, a), a);
  spec.AddMember("variant", str(variant.name, a), a);
  auto tmpl = json::parse(variant.template_->json, json::sources::stored_json);
  Value template_value(rapidjson::kObjectType);
  if (tmpl && tmpl->IsObject()) template_value.CopyFrom(*tmpl, a);
  spec.AddMember("template", template_value, a);
  model::write_pod_config(spec, variant.pod, a);
  d.AddMember("spec", spec, a);

  return json::write(d);
}

}  // namespace octorun::runnerset
