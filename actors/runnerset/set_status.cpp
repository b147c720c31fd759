// The RunnerSet actor publishing its status: counts in total and per variant,
// the scale set ids, the CredentialsReady condition.
#include <spdlog/spdlog.h>

#include "actors/kinds.hpp"
#include "actors/runnerset/intake_condition.hpp"
#include "actors/runnerset/set_state.hpp"
#include "adapters/common/json.hpp"
#include "adapters/resources/naming.hpp"

namespace octorun::runnerset::detail {

// ---- status ------------------------------------------------------------------

void put_counts(rapidjson::Value& obj, const counts& c, json::allocator& a) {
  obj.AddMember("desiredReplicas", c.desired, a);
  obj.AddMember("replicas", c.replicas, a);
  obj.AddMember("pendingRunners", c.pending, a);
  obj.AddMember("idleRunners", c.idle, a);
  obj.AddMember("runningRunners", c.running, a);
  obj.AddMember("failedRunners", c.failed, a);
  obj.AddMember("assignedJobs", static_cast<std::int32_t>(c.assigned), a);
}

// The counts in total and, for a set with variants, per variant, with the
// scale set ids (Listener intake).
void write_counts(rapidjson::Value& status, const variant_counts& per_variant, bool declared,
                  json::allocator& a) {
  const std::int64_t single = !declared && !per_variant.empty() ? per_variant.front().second.scale_set_id : 0;
  if (single != 0)
    status.AddMember("scaleSetId", single, a);
  else
    status.AddMember("scaleSetId", rapidjson::Value(rapidjson::kNullType), a);
  counts total;
  for (const auto& [v, c] : per_variant) {
    total.desired += c.desired;
    total.replicas += c.replicas;
    total.pending += c.pending;
    total.idle += c.idle;
    total.running += c.running;
    total.failed += c.failed;
    total.assigned += c.assigned;
  }
  put_counts(status, total, a);
  if (!declared) {
    status.AddMember("variants", rapidjson::Value(rapidjson::kNullType), a);
    return;
  }
  rapidjson::Value variants(rapidjson::kArrayType);
  for (const auto& [v, c] : per_variant) {
    rapidjson::Value entry(rapidjson::kObjectType);
    entry.AddMember("name", json::string_value(v, a), a);
    if (c.scale_set_id != 0) entry.AddMember("scaleSetId", c.scale_set_id, a);
    put_counts(entry, c, a);
    variants.PushBack(entry, a);
  }
  status.AddMember("variants", variants, a);
}

void publish_status(self_ptr self, const variant_counts* counted, bool declared) {
  auto& st = self->state;
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  rapidjson::Value status(rapidjson::kObjectType);
  status.AddMember("observedGeneration", st.set->metadata.generation, a);
  // A merge patch: what is left out stays as it was (the counts while they
  // are unknown), what no longer applies is written null.
  if (counted != nullptr) write_counts(status, *counted, declared, a);
  status.AddMember("selector", json::string_value(resources::selector(st.set->metadata.name), a), a);
  rapidjson::Value conditions(rapidjson::kArrayType);
  rapidjson::Value ready(rapidjson::kObjectType);
  ready.AddMember("type", "CredentialsReady", a);
  const bool loaded = st.credentials_error.empty() && st.github;
  ready.AddMember("status", rapidjson::StringRef(loaded ? "True" : "False"), a);
  ready.AddMember("reason", rapidjson::StringRef(loaded ? "Loaded" : "Invalid"), a);
  ready.AddMember("message", json::string_value(st.credentials_error, a), a);
  conditions.PushBack(ready, a);
  if (auto intake = intake_condition(st.set->spec.intake, st.cfg.webhook_intake_enabled))
    conditions.PushBack(condition_json(*intake, a), a);
  status.AddMember("conditions", conditions, a);
  auto text = json::write(status);
  if (text == st.published_status) return;
  if (st.status_in_flight) {
    st.status_stale = true;  // published once the write in flight returns
    return;
  }
  d.AddMember("status", status, a);
  st.status_in_flight = true;
  self->request(st.cfg.kube, st.cfg.request_timeout,
                kube::patch_request{kinds::runnersets(), st.cfg.ns, st.cfg.name, kube::patch_type::merge,
                                    json::write(d), "status"})
      .then(
          [=](kube::object_result& r) {
            auto& s = self->state;
            s.status_in_flight = false;
            if (r) {
              s.published_status = text;
            } else if (!r.error().not_found()) {
              spdlog::warn("runnerset {}: publishing status: {}", id(self), kube::to_string(r.error()));
            }
            if (std::exchange(s.status_stale, false)) reconcile(self);
          },
          [=](caf::error&) { self->state.status_in_flight = false; });
}

}  // namespace octorun::runnerset::detail
