#include "adapters/admission/webhook_configuration.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "adapters/admission/handlers.hpp"
#include "adapters/admission/review.hpp"
#include "adapters/common/base64.hpp"

namespace octorun::admission {
namespace {

using writer = rapidjson::Writer<rapidjson::StringBuffer>;

void str(writer& w, const std::string& s) { w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size())); }

void webhook(writer& w, const webhook_configuration_options& o, const std::string& name, endpoint e,
             const char* resource, const std::string& failure_policy) {
  w.StartObject();
  w.Key("name");
  str(w, name);
  w.Key("admissionReviewVersions");
  w.StartArray();
  w.String("v1");
  w.EndArray();
  w.Key("sideEffects");
  w.String("None");
  w.Key("failurePolicy");
  str(w, failure_policy);
  w.Key("matchPolicy");
  w.String("Equivalent");
  w.Key("timeoutSeconds");
  w.Int(o.timeout_seconds);
  w.Key("clientConfig");
  w.StartObject();
  if (o.target.url_base.empty()) {
    w.Key("service");
    w.StartObject();
    w.Key("namespace");
    str(w, o.target.service_namespace);
    w.Key("name");
    str(w, o.target.service_name);
    w.Key("port");
    w.Int(o.target.service_port);
    w.Key("path");
    w.String(path_of(e));
    w.EndObject();
  } else {
    w.Key("url");
    str(w, o.target.url_base + path_of(e));
  }
  if (!o.ca_bundle_pem.empty()) {
    w.Key("caBundle");
    str(w, base64_encode(o.ca_bundle_pem));
  }
  w.EndObject();
  w.Key("rules");
  w.StartArray();
  w.StartObject();
  w.Key("apiGroups");
  w.StartArray();
  w.String("octorun.io");
  w.EndArray();
  w.Key("apiVersions");
  w.StartArray();
  w.String("v1alpha1");
  w.EndArray();
  w.Key("operations");
  w.StartArray();
  w.String("CREATE");
  w.String("UPDATE");
  w.EndArray();
  w.Key("resources");
  w.StartArray();
  w.String(resource);
  w.EndArray();
  w.Key("scope");
  w.String("Namespaced");
  w.EndObject();
  w.EndArray();
  if (!o.namespace_selector.empty()) {
    w.Key("namespaceSelector");
    w.StartObject();
    w.Key("matchLabels");
    w.StartObject();
    for (const auto& [k, v] : o.namespace_selector) {
      str(w, k);
      str(w, v);
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndObject();
}

std::string configuration(const webhook_configuration_options& o, const char* kind, bool mutating) {
  rapidjson::StringBuffer sb;
  writer w(sb);
  w.StartObject();
  w.Key("apiVersion");
  w.String("admissionregistration.k8s.io/v1");
  w.Key("kind");
  w.String(kind);
  w.Key("metadata");
  w.StartObject();
  w.Key("name");
  str(w, o.name);
  w.EndObject();
  w.Key("webhooks");
  w.StartArray();
  if (mutating) {
    webhook(w, o, "mrunnerset.octorun.io", endpoint::mutate_runnerset, "runnersets", o.failure_policy);
  } else {
    webhook(w, o, "vrunnerset.octorun.io", endpoint::validate_runnerset, "runnersets", o.failure_policy);
    webhook(w, o, "vrunner.octorun.io", endpoint::validate_runner, "runners", o.runner_failure_policy);
  }
  w.EndArray();
  w.EndObject();
  return std::string(sb.GetString(), sb.GetSize());
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
  const auto value = "\"" + base64_encode(ca_bundle_pem) + "\"";
  for (int i = 0; i < webhooks; ++i)
    ops.push_back({"add", "/webhooks/" + std::to_string(i) + "/clientConfig/caBundle", value});
  return ops;
}

std::string ca_bundle_patch(const std::string& ca_bundle_pem, int webhooks) {
  return encode_json_patch(ca_bundle_ops(ca_bundle_pem, webhooks));
}

}  // namespace octorun::admission
