// Warm nodes in the set's plan (warm_nodes.hpp; docs/scaling.md "Warm
// nodes"): which PodTemplates and CapacityBuffers the set keeps, as the
// plan decides them, and what it notes of its pods' waits for a node. Pure.
#include <algorithm>
#include <utility>

#include "actors/runnerset/plan.hpp"

namespace octorun::runnerset {
namespace {

constexpr std::string_view template_kind = "PodTemplate";
constexpr std::string_view buffer_kind = "CapacityBuffer";

// An apply or delete, unless one is in flight; one that failed waits for retry_at.
void add_warm_action(const set_observation& o, std::vector<action>& out, action_kind kind,
                     const std::string& key, std::string body = {}) {
  if (o.in_flight.contains(action_kind::apply_warm_nodes, key) ||
      o.in_flight.contains(action_kind::delete_warm_nodes, key))
    return;
  if (o.warm_nodes.errors.count(key) > 0 && o.now < o.warm_nodes.retry_at) return;
  action a;
  a.kind = kind;
  a.subject = key;
  a.text = std::move(body);
  out.push_back(std::move(a));
}

std::string buffer_key_of(std::string_view template_key) {
  return std::string(buffer_kind) + "/" + std::string(key_name(template_key));
}

// Deletes the objects of `keys` that may exist and are not wanted: a
// CapacityBuffer first, its PodTemplate once the buffer is gone (a buffer
// never points at a template that is not there).
void delete_unwanted(const set_observation& o, const std::set<std::string>& keys,
                     const std::set<std::string>& wanted, std::vector<action>& out) {
  const auto& w = o.warm_nodes;
  for (const auto& key : keys) {
    if (wanted.count(key) > 0 || w.deleted.count(key) > 0) continue;
    if (key_kind(key) == template_kind) {
      const auto buffer = buffer_key_of(key);
      if (keys.count(buffer) > 0 && w.deleted.count(buffer) == 0) continue;
    }
    add_warm_action(o, out, action_kind::delete_warm_nodes, key);
  }
}

// Every key the set may have made: those applied or failing this run, and,
// while its status says it kept warm nodes (a manager before this one may
// have made them), those of each variant it names.
std::set<std::string> known_keys(const set_observation& o,
                                 const std::vector<model::effective_variant>& variants) {
  const auto& set = *o.set;
  std::set<std::string> keys;
  for (const auto& [key, body] : o.warm_nodes.applied) keys.insert(key);
  for (const auto& [key, why] : o.warm_nodes.errors) keys.insert(key);
  const bool said = std::any_of(set.status.conditions.begin(), set.status.conditions.end(),
                                [](const model::condition& c) { return c.type == "WarmNodesReady"; });
  if (said) {
    std::vector<std::string> names;
    for (const auto& v : variants) names.push_back(v.name);
    for (const auto& v : set.status.variants) names.push_back(v.name);
    if (set.spec.variants.empty()) names.emplace_back();
    for (const auto& name : names) {
      keys.insert(warm_template_key(set.metadata.name, name));
      keys.insert(capacity_buffer_key(set.metadata.name, name));
    }
  }
  return keys;
}

void wake_for_retry(const set_observation& o, std::vector<action>& out) {
  const auto& w = o.warm_nodes;
  if ((w.errors.empty() && !w.unserved) || w.retry_at <= o.now) return;
  add_wake(o, out, std::string(warm_nodes_wake), w.retry_at);
}

std::string chunks_text(std::int32_t n) { return std::to_string(n) + (n == 1 ? " chunk" : " chunks"); }

}  // namespace

void note_runner_scheduled(set_observation& w, const std::string& runner, const model::runner_pod& pod) {
  auto it = w.runners.find(runner);
  if (it == w.runners.end() || pod.scheduled_at <= 0) return;
  auto& r = it->second;
  if (r.node_wait_sampled || r.view.created <= 0) return;
  r.node_wait_sampled = true;
  // Only a wait for a node is kept (node_startup_samples::add): a variant
  // whose pods always found room has no entry, and keeps no warm nodes.
  // The runner's start-up sample keeps it too (stuck_start.cpp), so that a
  // start-time target may size without it.
  const auto wait = pod.scheduled_at - r.view.created;
  w.newest_scheduling_wait[r.variant] = wait;
  if (wait <= w.node_startup_rule.min_wait_seconds) return;
  r.node_wait = wait;
  w.node_startups[r.variant].add(wait, w.node_startup_rule);
}

std::optional<model::condition> plan_warm_nodes(const set_observation& o,
                                                const std::vector<model::effective_variant>& variants,
                                                variant_counts& per_variant, std::vector<action>& out) {
  const auto& set = *o.set;
  const auto& w = o.warm_nodes;
  const bool unserved_waits = w.unserved && o.now < w.retry_at;
  std::set<std::string> wanted;
  std::string requested;  // for the condition
  bool applied = true;
  for (const auto& v : variants) {
    auto entry = std::find_if(per_variant.begin(), per_variant.end(),
                              [&](const auto& e) { return e.first == v.name; });
    if (entry == per_variant.end() || !entry->second.start_time) continue;
    auto samples = o.node_startups.find(v.name);
    if (samples == o.node_startups.end() || samples->second.seconds.empty()) continue;  // no pod waited
    auto tmpl = warm_template_json(set, v);
    if (!tmpl) continue;  // the runner pods cannot be made either: PodConfigReady says why
    auto& c = entry->second;
    model::warm_node_facts f;
    f.runners = &*c.start_time;
    f.node_startup_p95 = model::p95(samples->second.seconds);
    f.max_runners = v.max_runners;
    f.runners_now = std::max(c.replicas, c.desired);
    const auto sized = model::size_warm_nodes(f, o.start_time_rule);
    const auto tkey = warm_template_key(set.metadata.name, v.name);
    const auto bkey = capacity_buffer_key(set.metadata.name, v.name);
    wanted.insert(tkey);
    wanted.insert(bkey);
    if (unserved_waits) continue;  // the API is not served: nothing is asked
    c.warm_nodes = sized;
    requested += (requested.empty() ? "" : "; ") + std::string(buffer_kind) + " " +
                 warm_nodes_name(set.metadata.name, v.name) + " asks for " + chunks_text(sized.chunks);
    const auto buffer = capacity_buffer_json(set, v, sized.chunks);
    auto done = [&](const std::string& key, const std::string& body) {
      auto it = w.applied.find(key);
      return it != w.applied.end() && it->second == body;
    };
    const bool template_done = done(tkey, *tmpl);
    if (!template_done) add_warm_action(o, out, action_kind::apply_warm_nodes, tkey, *tmpl);
    applied &= template_done;
    if (!done(bkey, buffer)) {
      applied = false;
      // Its shape first: a buffer never points at a template that is not there.
      if (template_done) add_warm_action(o, out, action_kind::apply_warm_nodes, bkey, buffer);
    }
  }
  delete_unwanted(o, known_keys(o, variants), wanted, out);
  wake_for_retry(o, out);
  if (wanted.empty()) return std::nullopt;

  model::condition c;
  c.type = "WarmNodesReady";
  c.status = "False";
  if (w.unserved) {
    c.reason = "CapacityBufferUnavailable";
    c.message =
        "The cluster does not serve capacitybuffers.autoscaling.x-k8s.io/v1beta1: warm nodes are off, warm "
        "runners still count. Install a node autoscaler that implements CapacityBuffer and its CRD "
        "(Karpenter "
        "with --feature-gates CapacityBuffer=true, or the cluster autoscaler); the manager tries again every "
        "10 minutes.";
    return c;
  }
  for (const auto& [key, why] : w.errors)
    if (wanted.count(key) > 0) c.message += (c.message.empty() ? "" : "; ") + key + ": " + why;
  if (!c.message.empty()) {
    c.reason = "ApplyFailed";
    return c;
  }
  if (!applied) {
    for (const auto& old : set.status.conditions)
      if (old.type == c.type) return old;  // no news yet: say what was said
    c.status = "Unknown";
    c.reason = "Applying";
    c.message = "applying the warm nodes' PodTemplates and CapacityBuffers";
    return c;
  }
  c.status = "True";
  c.reason = "Requested";
  c.message = requested + " of spare node capacity shaped like its runner.";
  return c;
}

void remove_warm_nodes(const set_observation& o, std::vector<action>& out) {
  delete_unwanted(o, known_keys(o, model::effective_variants(o.set->spec)), {}, out);
}

}  // namespace octorun::runnerset
