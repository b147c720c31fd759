#include "adapters/admission/ca_injection.hpp"

#include "adapters/admission/review.hpp"
#include "adapters/admission/webhook_configuration.hpp"
#include "common/json.hpp"

namespace octorun::admission {
namespace {

constexpr int attempts = 5;

expected<ok_t, std::string> inject_into(kube::client& client, const kube::resource& r,
                                        const std::string& name, const std::string& ca_bundle_pem) {
  std::string last_error;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    auto current = client.get(r, "", name);
    if (!current) return unexpected<std::string>{r.plural + "/" + name + ": " + current.error().message};
    const rapidjson::Value* webhooks = current->member("webhooks");
    const int count = webhooks != nullptr && webhooks->IsArray() ? static_cast<int>(webhooks->Size()) : 0;
    if (count == 0) return unexpected<std::string>{r.plural + "/" + name + " has no webhooks"};
    // The index-based patch applies only to the version it was computed from.
    std::vector<json_patch_op> ops = {
        {"test", "/metadata/resourceVersion", json::quote(current->resource_version)}};
    for (auto& op : ca_bundle_ops(ca_bundle_pem, count)) ops.push_back(std::move(op));
    auto done = client.patch(r, "", name, kube::patch_type::json, encode_json_patch(ops));
    if (done) return ok;
    last_error = done.error().message;
    if (!done.error().invalid() && !done.error().conflict()) break;  // only a stale read is retried
  }
  return unexpected<std::string>{r.plural + "/" + name + ": " + last_error};
}

}  // namespace

kube::resource mutating_webhook_configurations() {
  return {"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", false};
}

kube::resource validating_webhook_configurations() {
  return {"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", false};
}

expected<ok_t, std::string> inject_ca_bundle(kube::client& client, const std::string& name,
                                             const std::string& ca_bundle_pem) {
  for (const auto& r : {mutating_webhook_configurations(), validating_webhook_configurations()}) {
    if (auto done = inject_into(client, r, name, ca_bundle_pem); !done) return done;
  }
  return ok;
}

}  // namespace octorun::admission
