#include "adapters/admission/webhook_configuration.hpp"

#include "adapters/admission/handlers.hpp"
#include "adapters/admission/review.hpp"
#include "common/base64.hpp"
#include "common/json.hpp"
#include "common/json_writer.hpp"

namespace octorun::admission {
namespace {

void webhook(json::writer& w, const webhook_configuration_options& o, const std::string& name, endpoint e,
             const char* resource, const std::string& failure_policy,
             std::initializer_list<const char*> operations = {"CREATE", "UPDATE"}, bool namespaced = true) {
  w.open().field("name", name);
  w.open_array("admissionReviewVersions").value("v1").close_array();
  w.field("sideEffects", "None")
      .field("failurePolicy", failure_policy)
      .field("matchPolicy", "Equivalent")
      .field("timeoutSeconds", o.timeout_seconds);
  w.open("clientConfig");
  if (o.target.url_base.empty()) {
    w.open("service")
        .field("namespace", o.target.service_namespace)
        .field("name", o.target.service_name)
        .field("port", o.target.service_port)
        .field("path", path_of(e))
        .close();
  } else {
    w.field("url", o.target.url_base + path_of(e));
  }
  if (!o.ca_bundle_pem.empty()) w.field("caBundle", base64_encode(o.ca_bundle_pem));
  w.close();
  w.open_array("rules").open();
  w.open_array("apiGroups").value("octorun.io").close_array();
  w.open_array("apiVersions").value("v1alpha1").close_array();
  w.open_array("operations");
  for (const char* op : operations) w.value(op);
  w.close_array();
  w.open_array("resources").value(resource).close_array();
  w.field("scope", namespaced ? "Namespaced" : "Cluster").close().close_array();
  // A cluster-scoped object is in no namespace, which a namespaceSelector
  // cannot exclude: webhooks confined by labels judge only the classes
  // carrying the same labels (several such managers may share a cluster).
  if (!o.namespace_selector.empty()) {
    w.open(namespaced ? "namespaceSelector" : "objectSelector").open("matchLabels");
    for (const auto& [k, v] : o.namespace_selector) w.field(k.c_str(), v);
    w.close().close();
  }
  w.close();
}

std::string configuration(const webhook_configuration_options& o, const char* kind, bool mutating) {
  json::writer w;
  w.open().field("apiVersion", "admissionregistration.k8s.io/v1").field("kind", kind);
  w.open("metadata").field("name", o.name).close();
  w.open_array("webhooks");
  if (mutating) {
    webhook(w, o, "mrunnerset.octorun.io", endpoint::mutate_runnerset, "runnersets", o.failure_policy);
  } else {
    webhook(w, o, "vrunnerset.octorun.io", endpoint::validate_runnerset, "runnersets", o.failure_policy);
    webhook(w, o, "vrunner.octorun.io", endpoint::validate_runner, "runners", o.runner_create_failure_policy,
            {"CREATE"});
    webhook(w, o, "vrunner-update.octorun.io", endpoint::validate_runner, "runners", o.runner_failure_policy,
            {"UPDATE"});
    // Fails open: a cluster admin writes classes (the chart's default one
    // before the manager answers), and a class that breaks a rule is used
    // by no set (model::judge_set).
    webhook(w, o, "vrunnerclass.octorun.io", endpoint::validate_runnerclass, "runnerclasses", "Ignore",
            {"CREATE", "UPDATE"}, false);
  }
  return w.close_array().close().str();
}

}  // namespace

std::string mutating_webhook_configuration(const webhook_configuration_options& options) {
  return configuration(options, "MutatingWebhookConfiguration", true);
}

std::string validating_webhook_configuration(const webhook_configuration_options& options) {
  return configuration(options, "ValidatingWebhookConfiguration", false);
}

std::vector<json_patch_op> ca_bundle_ops(const std::string& ca_bundle_pem, int webhooks) {
  std::vector<json_patch_op> ops;
  const auto value = json::quote(base64_encode(ca_bundle_pem));
  for (int i = 0; i < webhooks; ++i)
    ops.push_back({"add", "/webhooks/" + std::to_string(i) + "/clientConfig/caBundle", value});
  return ops;
}

std::string ca_bundle_patch(const std::string& ca_bundle_pem, int webhooks) {
  return encode_json_patch(ca_bundle_ops(ca_bundle_pem, webhooks));
}

}  // namespace octorun::admission
