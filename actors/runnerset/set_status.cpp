#include "actors/runnerset/set_status.hpp"

#include "actors/runnerset/scale_sets.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "model/conditions.hpp"
#include "model/naming.hpp"

namespace octorun::runnerset {
namespace {

// ---- status ------------------------------------------------------------------

void put_counts(rapidjson::Value& obj, const counts& c, json::allocator& a) {
  obj.AddMember("desiredReplicas", c.desired, a);
  obj.AddMember("replicas", c.replicas, a);
  obj.AddMember("pendingRunners", c.pending, a);
  obj.AddMember("idleRunners", c.idle, a);
  obj.AddMember("runningRunners", c.running, a);
  obj.AddMember("failedRunners", c.failed, a);
  obj.AddMember("assignedJobs", static_cast<std::int32_t>(c.assigned), a);
  obj.AddMember("outdatedRunners", c.outdated, a);
}

// What a variant's start-time target sized (crds/README.md, status.startTime).
rapidjson::Value start_time_json(const model::start_time_sizing& s,
                                 const std::optional<model::warm_node_sizing>& warm_nodes,
                                 json::allocator& a) {
  rapidjson::Value v(rapidjson::kObjectType);
  v.AddMember("targetP95Seconds", s.target_p95_seconds, a);
  if (s.observed_p95) v.AddMember("observedP95Seconds", *s.observed_p95, a);
  if (s.startup_p95) v.AddMember("runnerStartupP95Seconds", *s.startup_p95, a);
  v.AddMember("recentJobs", s.arrivals, a);
  v.AddMember("warmRunners", s.idle_buffer, a);
  // Warm nodes (warm_nodes.hpp), once a runner pod waited for a node.
  if (warm_nodes && warm_nodes->node_startup_p95)
    v.AddMember("nodeStartupP95Seconds", *warm_nodes->node_startup_p95, a);
  if (warm_nodes) v.AddMember("warmNodes", warm_nodes->chunks, a);
  return v;
}

// The counts in total and, for a set with variants, per variant, with the
// scale set ids (Listener intake).
void write_counts(rapidjson::Value& status, const variant_counts& per_variant, bool declared,
                  json::allocator& a) {
  const counts* single = !declared && !per_variant.empty() ? &per_variant.front().second : nullptr;
  if (single != nullptr && single->scale_set_id != 0)
    status.AddMember("scaleSetId", single->scale_set_id, a);
  else
    status.AddMember("scaleSetId", rapidjson::Value(rapidjson::kNullType), a);
  if (single != nullptr && !single->session_id.empty())
    status.AddMember("sessionId", json::string_value(single->session_id, a), a);
  else
    status.AddMember("sessionId", rapidjson::Value(rapidjson::kNullType), a);
  counts total;
  for (const auto& [v, c] : per_variant) {
    total.desired += c.desired;
    total.replicas += c.replicas;
    total.pending += c.pending;
    total.idle += c.idle;
    total.running += c.running;
    total.failed += c.failed;
    total.assigned += c.assigned;
    total.outdated += c.outdated;
  }
  put_counts(status, total, a);
  // A set with variants says it per variant.
  if (single != nullptr && single->start_time)
    status.AddMember("startTime", start_time_json(*single->start_time, single->warm_nodes, a), a);
  else
    status.AddMember("startTime", rapidjson::Value(rapidjson::kNullType), a);
  if (!declared) {
    status.AddMember("variants", rapidjson::Value(rapidjson::kNullType), a);
    return;
  }
  rapidjson::Value variants(rapidjson::kArrayType);
  for (const auto& [v, c] : per_variant) {
    rapidjson::Value entry(rapidjson::kObjectType);
    entry.AddMember("name", json::string_value(v, a), a);
    if (c.scale_set_id != 0) entry.AddMember("scaleSetId", c.scale_set_id, a);
    if (!c.session_id.empty()) entry.AddMember("sessionId", json::string_value(c.session_id, a), a);
    put_counts(entry, c, a);
    if (c.start_time) entry.AddMember("startTime", start_time_json(*c.start_time, c.warm_nodes, a), a);
    variants.PushBack(entry, a);
  }
  status.AddMember("variants", variants, a);
}

}  // namespace

credentials_facts credentials_facts_of(const set_observation& o) {
  credentials_facts f;
  f.loaded = o.credentials_loaded;
  f.secret_problem = o.credentials_error;
  f.connection_problem = o.github_connection_problem;
  f.access = o.access;
  if (o.set) {
    f.secret = o.set->spec.credentials_secret_name;
    f.scope_url = o.set->spec.scope_url;
    for (const auto& c : o.published_conditions.value_or(o.set->status.conditions))
      if (c.type == "CredentialsReady") f.published = c;
  }
  return f;
}

std::vector<model::condition> set_conditions(const std::vector<model::condition>& previous,
                                             std::vector<model::condition> current, std::string_view now,
                                             std::int64_t generation) {
  std::vector<model::condition> out;
  for (auto& c : current) {
    c.observed_generation = generation;
    std::vector<model::condition> one;
    for (const auto& p : previous)
      if (p.type == c.type) one = {p};
    model::set_condition(one, std::move(c), now);
    out.push_back(std::move(one.front()));
  }
  return out;
}

std::string status_json(const model::runnerset& set, const variant_counts* counted, bool declared,
                        const std::vector<model::condition>& conditions,
                        const std::map<std::int64_t, deferred_removal>* pending) {
  json::allocator a;
  rapidjson::Value status(rapidjson::kObjectType);
  status.AddMember("observedGeneration", set.metadata.generation, a);
  // A merge patch: what is left out stays as it was (the counts while they
  // are unknown), what no longer applies is written null.
  if (counted != nullptr) write_counts(status, *counted, declared, a);
  status.AddMember("selector", json::string_value(model::selector(set.metadata.name), a), a);
  status.AddMember("conditions", model::conditions_json(conditions, a), a);
  if (pending != nullptr) {
    rapidjson::Value removals(rapidjson::kArrayType);
    for (const auto& [id, d] : *pending) {
      rapidjson::Value entry(rapidjson::kObjectType);
      entry.AddMember("runnerId", id, a);
      entry.AddMember("name", json::string_value(d.runner, a), a);
      removals.PushBack(entry, a);
    }
    if (removals.Empty())
      status.AddMember("pendingRemovals", rapidjson::Value(rapidjson::kNullType), a);
    else
      status.AddMember("pendingRemovals", removals, a);
  }
  return json::write(status);
}

status_write status_write_due(const std::string& text, const std::string& published, bool in_flight,
                              std::optional<time_point> written_at, std::chrono::steady_clock::duration hold,
                              time_point now) {
  if (text == published) return {};
  if (in_flight) return {status_write::after_write, {}};
  if (written_at && *written_at + hold > now) return {status_write::later, *written_at + hold};
  return {status_write::now, {}};
}

std::set<std::int64_t> pending_removal_ids(const std::string& status_text) {
  std::set<std::int64_t> ids;
  auto d = json::parse(status_text, json::sources::stored_json);
  const auto* removals = d && d->IsObject() ? json::find_value(*d, "pendingRemovals") : nullptr;
  if (removals == nullptr || !removals->IsArray()) return ids;
  for (const auto& r : removals->GetArray())
    if (r.IsObject())
      if (auto id = json::i64(r, "runnerId"); id != 0) ids.insert(id);
  return ids;
}

variant_counts counts_without_credentials(const set_observation& o) {
  const auto& status = o.set->status;
  variant_counts out;
  for (const auto& v : model::effective_variants(o.set->spec)) {
    counts c;
    const model::runner_counts* was = o.set->spec.variants.empty() ? &status.counts : nullptr;
    if (was != nullptr) c.scale_set_id = status.scale_set_id;
    for (const auto& vs : status.variants)
      if (was == nullptr && vs.name == v.name) {
        was = &vs.counts;
        c.scale_set_id = vs.scale_set_id;
      }
    c.session_id = recorded_session(status, v.name);
    if (was != nullptr) {
      c.desired = was->desired_replicas;
      c.outdated = was->outdated_runners;
      c.assigned = was->assigned_jobs;
    }
    for (const auto& [name, r] : o.runners)
      if (r.variant == v.name) c.add(r.view);
    out.emplace_back(v.name, c);
  }
  return out;
}

}  // namespace octorun::runnerset
