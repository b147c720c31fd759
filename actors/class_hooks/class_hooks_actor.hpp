// The reader of the RunnerClasses' own webhook secrets, on every replica
// that serves the webhook intake (followers answer deliveries too, and must
// verify them): it watches the RunnerClasses, reads the Secret each names in
// spec.github.webhookSecretRef, by name in the platform's namespace (as a
// RunnerSet reads its class's credentials Secret: a get, never a list or
// watch of Secrets), again at every resync and whenever a class changes, and
// hands the intake the secrets whole (github::class_webhook_secrets). A
// class whose Secret cannot be used is logged once per reason, and its path
// answers 503 saying why (docs/intakes.md).
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "adapters/github/webhook_intake.hpp"
#include "adapters/kube/client.hpp"
#include "adapters/kube/config.hpp"

namespace octorun::class_hooks {

struct class_hooks_config {
  kube::config kube;
  kube::client_options kube_options;
  std::string platform_namespace;  // where the classes' Secrets are
  std::chrono::seconds resync{30};
  std::chrono::milliseconds request_timeout{30'000};
  std::shared_ptr<github::class_webhook_secrets> secrets;  // what the intake verifies with
};

caf::actor spawn_class_hooks(caf::actor_system& sys, class_hooks_config cfg);

}  // namespace octorun::class_hooks
