#include "actors/runnerset/set_status.hpp"

#include "actors/runnerset/scale_sets.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/json_writer.hpp"
#include "model/conditions.hpp"
#include "model/naming.hpp"

namespace octorun::runnerset {
namespace {

// ---- status ------------------------------------------------------------------

void put_counts(json::writer& w, const counts& c) {
  w.field("desiredReplicas", c.desired).field("replicas", c.replicas).field("pendingRunners", c.pending);
  w.field("idleRunners", c.idle).field("runningRunners", c.running).field("failedRunners", c.failed);
  w.field("assignedJobs", static_cast<std::int32_t>(c.assigned)).field("outdatedRunners", c.outdated);
}

// What a variant's start-time target sized (crds/README.md, status.startTime).
void write_start_time(json::writer& w, const model::start_time_sizing& s,
                      const std::optional<model::warm_node_sizing>& warm_nodes) {
  w.open("startTime").field("targetP95Seconds", s.target_p95_seconds);
  if (s.observed_p95) w.field("observedP95Seconds", *s.observed_p95);
  if (s.startup_p95) w.field("runnerStartupP95Seconds", *s.startup_p95);
  w.field("recentJobs", s.arrivals).field("warmRunners", s.idle_buffer);
  // Warm nodes (warm_nodes.hpp), once a runner pod waited for a node.
  if (warm_nodes && warm_nodes->node_startup_p95)
    w.field("nodeStartupP95Seconds", *warm_nodes->node_startup_p95);
  if (warm_nodes) w.field("warmNodes", warm_nodes->chunks);
  w.close();
}

// The counts in total and, for a set with variants, per variant, with the
// scale set ids (Listener intake).
void write_counts(json::writer& w, const variant_counts& per_variant, bool declared) {
  const counts* single = !declared && !per_variant.empty() ? &per_variant.front().second : nullptr;
  if (single != nullptr && single->scale_set_id != 0)
    w.field("scaleSetId", single->scale_set_id);
  else
    w.null_field("scaleSetId");
  if (single != nullptr && !single->session_id.empty())
    w.field("sessionId", single->session_id);
  else
    w.null_field("sessionId");
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
  put_counts(w, total);
  // A set with variants says it per variant.
  if (single != nullptr && single->start_time)
    write_start_time(w, *single->start_time, single->warm_nodes);
  else
    w.null_field("startTime");
  if (!declared) {
    w.null_field("variants");
    return;
  }
  w.open_array("variants");
  for (const auto& [v, c] : per_variant) {
    w.open().field("name", v);
    if (c.scale_set_id != 0) w.field("scaleSetId", c.scale_set_id);
    w.optional("sessionId", c.session_id);
    put_counts(w, c);
    if (c.start_time) write_start_time(w, *c.start_time, c.warm_nodes);
    w.close();
  }
  w.close_array();
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
  json::writer w;
  w.open().field("observedGeneration", set.metadata.generation);
  // A merge patch: what is left out stays as it was (the counts while they
  // are unknown), what no longer applies is written null.
  if (counted != nullptr) write_counts(w, *counted, declared);
  w.field("selector", model::selector(set.metadata.name));
  model::write_conditions(w, "conditions", conditions);
  if (pending != nullptr && pending->empty()) w.null_field("pendingRemovals");
  if (pending != nullptr && !pending->empty()) {
    w.open_array("pendingRemovals");
    for (const auto& [id, d] : *pending) w.open().field("runnerId", id).field("name", d.runner).close();
    w.close_array();
  }
  return w.close().str();
}

status_write status_write_due(const std::string& text, const std::string& published, bool in_flight,
                              std::optional<time_point> written_at, std::chrono::steady_clock::duration hold,
                              time_point now, bool urgent) {
  if (text == published) return {};
  if (in_flight) return {status_write::after_write, {}};
  if (!urgent && written_at && *written_at + hold > now) return {status_write::later, *written_at + hold};
  return {status_write::now, {}};
}

bool records_new_scale_set(const model::runnerset_status& status, const variant_counts& counted) {
  const auto recorded = recorded_scale_sets(status);
  for (const auto& [variant, c] : counted) {
    if (c.scale_set_id == 0) continue;
    auto it = recorded.find(variant);
    if (it == recorded.end() || it->second != c.scale_set_id) return true;
  }
  return false;
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
