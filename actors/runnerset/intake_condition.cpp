#include "actors/runnerset/intake_condition.hpp"

namespace octorun::runnerset {

std::optional<model::condition> intake_condition(model::intake_mode intake, bool webhook_intake_enabled) {
  if (intake != model::intake_mode::webhook || webhook_intake_enabled) return std::nullopt;
  model::condition c;
  c.type = "IntakeReady";
  c.status = "False";
  c.reason = "WebhookIntakeDisabled";
  c.message =
      "spec.intake is Webhook but the manager runs with --webhook-intake=false, so no webhook delivery "
      "reaches this set: use intake Listener, or start the manager with --webhook-intake=true";
  return c;
}

rapidjson::Value condition_json(const model::condition& c, json::allocator& a) {
  rapidjson::Value v(rapidjson::kObjectType);
  v.AddMember("type", json::string_value(c.type, a), a);
  v.AddMember("status", json::string_value(c.status, a), a);
  v.AddMember("reason", json::string_value(c.reason, a), a);
  v.AddMember("message", json::string_value(c.message, a), a);
  return v;
}

}  // namespace octorun::runnerset
