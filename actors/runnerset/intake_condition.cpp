#include "actors/runnerset/intake_condition.hpp"

namespace octorun::runnerset {

std::optional<model::condition> intake_condition(model::intake_mode intake, bool webhook_intake_enabled) {
  if (intake != model::intake_mode::webhook || webhook_intake_enabled) return std::nullopt;
  model::condition c;
  c.type = "IntakeReady";
  c.status = "False";
  c.reason = "WebhookIntakeDisabled";
  c.message =
      "spec.intake is Webhook but the manager runs without the webhook intake (--webhook-intake=false), so "
      "no webhook delivery reaches this set: create the set with intake Listener, or enable the webhook "
      "intake: chart value githubWebhook.enabled=true with githubWebhook.secret or "
      "githubWebhook.existingSecret (flag --webhook-intake=true with --webhook-secret-file)";
  return c;
}

}  // namespace octorun::runnerset
