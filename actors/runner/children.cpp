#include "actors/runner/children.hpp"

#include <rapidjson/document.h>

#include "actors/runner/pod_features.hpp"
#include "common/base64.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/json_writer.hpp"
#include "model/naming.hpp"

namespace octorun::runner {
namespace {

using json::allocator;
using json::set_member;
using rapidjson::Value;

Value str(const std::string& s, allocator& a) { return json::string_value(s, a); }

Value owner_reference(const model::runner& r, allocator& a) {
  return json::controller_reference(model::api_version, "Runner", r.metadata.name, r.metadata.uid, a);
}

// The labels every child of a Runner carries (so informers can select them).
void add_owner_labels(Value& labels, const model::runner& r, allocator& a) {
  set_member(labels, model::label_runnerset, str(r.spec->runner_set_name, a), a);
  set_member(labels, model::label_variant, str(r.spec->variant, a), a);
  set_member(labels, model::label_runner, str(r.metadata.name, a), a);
}

}  // namespace

std::string jit_secret_json(const model::runner& r, const jit_config& jit) {
  json::writer w;
  w.open().field("apiVersion", "v1").field("kind", "Secret");
  w.open("metadata")
      .field("name", model::jit_secret_name(r.metadata.name))
      .field("namespace", r.metadata.namespace_);
  w.open("labels")
      .field(model::label_runnerset, r.spec->runner_set_name)
      .field(model::label_variant, r.spec->variant);
  w.field(model::label_runner, r.metadata.name).close();
  json::write_controller_reference(w, model::api_version, "Runner", r.metadata.name, r.metadata.uid);
  w.close().field("type", "Opaque");
  w.open("data").field(model::jit_key_config, base64_encode(jit.encoded));
  w.field(model::jit_key_runner_id, base64_encode(std::to_string(jit.runner_id)));
  w.field(model::jit_key_runner_name, base64_encode(jit.runner_name)).close();
  return w.close().str();
}

expected<std::string, std::string> pod_json(const model::runner& r, const std::string& user_agent) {
  auto parsed = json::parse(r.spec->template_.json, json::sources::stored_json);
  if (!parsed || !parsed->IsObject()) return unexpected{std::string("spec.template is not a JSON object")};
  auto& tmpl = *parsed;

  rapidjson::Document pod(rapidjson::kObjectType);
  auto& a = pod.GetAllocator();
  pod.AddMember("apiVersion", "v1", a);
  pod.AddMember("kind", "Pod", a);

  Value meta(rapidjson::kObjectType);
  meta.AddMember("name", str(model::pod_name(r.metadata.name), a), a);
  meta.AddMember("namespace", str(r.metadata.namespace_, a), a);
  Value labels(rapidjson::kObjectType), annotations(rapidjson::kObjectType);
  if (const auto* tm = json::find_value(tmpl, "metadata")) {
    if (const auto* l = json::find_value(*tm, "labels"); l != nullptr && l->IsObject())
      labels.CopyFrom(*l, a);
    if (const auto* an = json::find_value(*tm, "annotations"); an != nullptr && an->IsObject())
      annotations.CopyFrom(*an, a);
  }
  add_owner_labels(labels, r, a);
  meta.AddMember("labels", labels, a);
  // An idle runner may go with its node: busy_pod_patch adds the autoscalers'
  // vetoes (safe-to-evict "false", do-not-disrupt) once it has a job.
  if (r.spec->pod.manage_safe_to_evict &&
      !r.spec->template_.annotations.count(model::annotation_safe_to_evict))
    set_member(annotations, model::annotation_safe_to_evict, Value("true", a), a);
  if (annotations.MemberCount() > 0) meta.AddMember("annotations", annotations, a);
  meta.AddMember("ownerReferences", owner_reference(r, a), a);
  pod.AddMember("metadata", meta, a);

  Value spec(rapidjson::kObjectType);
  if (const auto* ts = json::find_value(tmpl, "spec"); ts != nullptr && ts->IsObject()) spec.CopyFrom(*ts, a);
  // An ephemeral runner takes one job and exits; the Runner decides what
  // happens next, not the kubelet.
  if (spec.FindMember("restartPolicy") == spec.MemberEnd()) spec.AddMember("restartPolicy", "Never", a);

  auto containers = spec.FindMember("containers");
  Value* runner = nullptr;
  rapidjson::SizeType runner_index = 0;
  if (containers != spec.MemberEnd() && containers->value.IsArray())
    for (rapidjson::SizeType i = 0; i < containers->value.Size(); ++i)
      if (const auto* n = json::find_value(containers->value[i], "name");
          n != nullptr && n->IsString() && std::string_view(n->GetString()) == runner_container) {
        runner = &containers->value[i];
        runner_index = i;
      }
  if (runner == nullptr || !runner->IsObject())
    return unexpected{std::string("spec.template has no container named \"runner\"")};

  // Our variables replace any the template set under the same names.
  Value env(rapidjson::kArrayType);
  if (auto e = runner->FindMember("env"); e != runner->MemberEnd() && e->value.IsArray())
    for (auto& var : e->value.GetArray()) {
      const auto* n = json::find_value(var, "name");
      std::string_view name = n != nullptr && n->IsString() ? n->GetString() : "";
      if (name != jit_config_env && name != "GITHUB_ACTIONS_RUNNER_EXTRA_USER_AGENT" &&
          name != deprecated_exit_code_env)
        env.PushBack(Value(var, a), a);
    }
  Value jit(rapidjson::kObjectType);
  jit.AddMember("name", Value(jit_config_env, a), a);
  Value key_ref(rapidjson::kObjectType);
  key_ref.AddMember("name", str(model::jit_secret_name(r.metadata.name), a), a);
  key_ref.AddMember("key", rapidjson::StringRef(model::jit_key_config), a);
  Value from(rapidjson::kObjectType);
  from.AddMember("secretKeyRef", key_ref, a);
  jit.AddMember("valueFrom", from, a);
  env.PushBack(jit, a);
  Value agent(rapidjson::kObjectType);
  agent.AddMember("name", "GITHUB_ACTIONS_RUNNER_EXTRA_USER_AGENT", a);
  agent.AddMember("value", str(user_agent, a), a);
  env.PushBack(agent, a);
  // A runner GitHub refuses as deprecated exits 7 (actions/runner PR 4285)
  // instead of 0 from run.sh: its Runner turns Outdated, and its set stops
  // making runners of that template (docs/monitoring.md, "Runner version").
  Value deprecated(rapidjson::kObjectType);
  deprecated.AddMember("name", rapidjson::StringRef(deprecated_exit_code_env), a);
  deprecated.AddMember("value", "1", a);
  env.PushBack(deprecated, a);
  set_member(*runner, "env", std::move(env), a);
  add_pod_features(spec, runner_index, r, a);

  pod.AddMember("spec", spec, a);
  return json::write(pod);
}

std::string busy_pod_patch(const model::runner& r) {
  json::writer w;
  w.open().open("metadata").open("labels").field(model::label_busy, "true").close();
  const auto& set_by_template = r.spec->template_.annotations;
  const bool safe_to_evict = !set_by_template.count(model::annotation_safe_to_evict);
  const bool do_not_disrupt = !set_by_template.count(model::annotation_do_not_disrupt);
  if (safe_to_evict || do_not_disrupt) {
    w.open("annotations");
    if (safe_to_evict) w.field(model::annotation_safe_to_evict, "false");
    if (do_not_disrupt) w.field(model::annotation_do_not_disrupt, "true");
    w.close();
  }
  return w.close().close().str();
}

}  // namespace octorun::runner
