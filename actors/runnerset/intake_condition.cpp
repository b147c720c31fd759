#include "actors/runnerset/intake_condition.hpp"

namespace octorun::runnerset {

std::optional<model::condition> intake_condition(
    model::intake_mode intake, bool webhook_intake_enabled,
    const std::map<std::string, messages::scale_set_taken>& taken) {
  if (intake == model::intake_mode::listener && !taken.empty()) {
    model::condition c;
    c.type = "IntakeReady";
    c.status = "False";
    c.reason = scale_set_name_taken_reason;
    for (const auto& [variant, t] : taken)
      c.message += (c.message.empty() ? "" : "; ") + std::string("scale set ") + t.scale_set_name +
                   (variant.empty() ? "" : " (variant " + variant + ")") + " is held by RunnerSet " +
                   t.holder;
    c.message +=
        ": an older set in the same GitHub scope registered that name first (names compare "
        "case-insensitively), so this set registers no scale set under it, starts no listener and no runner "
        "for it until that set is gone; workflows name a scale set in runs-on, so rename this set (or the "
        "variant) to serve jobs here";
    return c;
  }
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
