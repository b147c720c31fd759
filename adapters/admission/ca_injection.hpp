// Puts the webhook's CA into our webhook configurations through the
// Kubernetes client: what the manager does at start and after each CA change
// in self-generated certificate mode (cert-manager users skip it).
#pragma once

#include <string>

#include "adapters/kube/client.hpp"
#include "common/expected.hpp"

namespace octorun::admission {

kube::resource mutating_webhook_configurations();
kube::resource validating_webhook_configurations();

// JSON-patches caBundle into every webhook of the Mutating- and
// ValidatingWebhookConfiguration called `name` (deploy/webhook-configurations.yaml).
// Reads each first to know how many webhooks it holds; the patch carries a
// `test` on that read's resourceVersion, so a concurrent edit is re-read and
// retried, never half-patched.
expected<ok_t, std::string> inject_ca_bundle(kube::client& client, const std::string& name,
                                             const std::string& ca_bundle_pem);

}  // namespace octorun::admission
