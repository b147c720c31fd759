// The Mutating/ValidatingWebhookConfiguration objects for our endpoints, with
// the caBundle injected (pure: JSON in, JSON out). The manager applies them
// (or the patch) through the Kubernetes client; tests through kubectl.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "adapters/admission/review.hpp"

namespace octorun::admission {

struct webhook_target {
  // Either a Service (in-cluster) ...
  std::string service_namespace;
  std::string service_name;
  int service_port = 443;
  // ... or a base URL (https://127.0.0.1:PORT, out-of-cluster and tests).
  std::string url_base;
};

struct webhook_configuration_options {
  std::string name = "octorun";  // metadata.name of both configurations
  webhook_target target;
  std::string ca_bundle_pem;
  // Only namespaces with these labels are covered (empty: all namespaces).
  std::map<std::string, std::string> namespace_selector;
  // RunnerSets: Fail, their URL and name rules exist only in the webhook.
  std::string failure_policy = "Fail";
  // Runner creates: Fail. Only the manager may create Runners (a Runner
  // made by anyone else would be registered with its set's credentials), so
  // no Runner is created while no replica answers.
  std::string runner_create_failure_policy = "Fail";
  // Runner updates: Ignore. The CRD's CEL rule already keeps the spec
  // immutable, and the manager must be able to update Runners (finalizers)
  // while no webhook replica answers, e.g. during its own rollout.
  std::string runner_failure_policy = "Ignore";
  int timeout_seconds = 10;
};

// JSON of the MutatingWebhookConfiguration (mrunnerset.octorun.io).
std::string mutating_webhook_configuration(const webhook_configuration_options& options);
// JSON of the ValidatingWebhookConfiguration (vrunnerset.octorun.io,
// vrunner.octorun.io for Runner creates, vrunner-update.octorun.io for updates).
std::string validating_webhook_configuration(const webhook_configuration_options& options);

// The JSON Patch operations that set caBundle on the first `webhooks`
// webhooks of a configuration, and that patch as a document.
std::vector<json_patch_op> ca_bundle_ops(const std::string& ca_bundle_pem, int webhooks);
std::string ca_bundle_patch(const std::string& ca_bundle_pem, int webhooks);

}  // namespace octorun::admission
