#include "actors/runnerset/runner_object.hpp"

#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/json_writer.hpp"
#include "model/naming.hpp"
#include "model/pod_config.hpp"

namespace octorun::runnerset {

std::string runner_json(const model::runnerset& set, const model::effective_variant& variant,
                        const std::string& suffix) {
  json::writer w;
  w.open().field("apiVersion", model::api_version).field("kind", "Runner");
  w.open("metadata")
      .field("name", model::runner_name(set.metadata.name, variant.name, suffix))
      .field("namespace", set.metadata.namespace_);
  w.open("labels").field(model::label_runnerset, set.metadata.name).field(model::label_variant, variant.name);
  w.close();
  // Held from the start (no patch to add it): the Runner actor releases it
  // once GitHub no longer holds the runner; its Secret and Pod then go with
  // it (their ownerReferences, the garbage collector).
  w.open_array("finalizers").value(model::runner_finalizer).close_array();
  json::write_controller_reference(w, model::api_version, "RunnerSet", set.metadata.name, set.metadata.uid);
  w.close();

  w.open("spec").field("scopeURL", set.spec.scope_url);
  w.field("credentialsSecretName", set.spec.credentials_secret_name);
  w.optional("runnerGroup", set.spec.runner_group);
  w.open_array("runnerLabels");
  for (const auto& l : variant.runner_labels) w.value(l);
  w.close_array();
  w.field("runnerSetName", set.metadata.name).field("variant", variant.name);
  // The template as the set's spec has it, written compact.
  auto tmpl = json::parse(variant.template_->json, json::sources::stored_json);
  w.raw_field("template", tmpl && tmpl->IsObject() ? json::write(*tmpl) : std::string("{}"));
  model::write_pod_config(w, variant.pod);
  return w.close().close().str();
}

}  // namespace octorun::runnerset
