#include "actors/runnerset/intake_condition.hpp"

namespace octorun::runnerset {

std::optional<resources::condition> intake_condition(resources::intake_mode intake,
                                                     bool webhook_intake_enabled) {
  if (intake != resources::intake_mode::webhook || webhook_intake_enabled) return std::nullopt;
  resources::condition c;
  c.type = "IntakeReady";
  c.status = "False";
  c.reason = "WebhookIntakeDisabled";
  c.message =
      "spec.intake is Webhook but the manager runs with --webhook-intake=false, so no webhook delivery "
      "reaches this set: use intake Listener, or start the manager with --webhook-intake=true";
  return c;
}

rapidjson::Value condition_json(const resources::condition& c, json::allocator& a) {
  rapidjson::Value v(rapidjson::kObjectType);
  v.AddMember("type", json::string_value(c.type, a), a);
  v.AddMember("status", json::string_value(c.status, a), a);
  v.AddMember("reason", json::string_value(c.reason, a), a);
  v.AddMember("message", json::string_value(c.message, a), a);
  return v;
}

}  // namespace octorun::runnerset
