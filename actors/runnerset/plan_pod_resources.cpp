// The per-set objects of a set's runner pods, as the plan decides them
// (plan.hpp plan_pod_resources). Pure.
#include <algorithm>
#include <utility>

#include "actors/runnerset/plan.hpp"
#include "actors/runnerset/set_status.hpp"
#include "common/backoff.hpp"
#include "model/pod_config.hpp"

namespace octorun::runnerset {

void add_object_action(const set_observation& o, std::vector<action>& out, action_kind kind,
                       const std::string& key, std::string body) {
  if (o.in_flight.contains(kind, key)) return;
  if (o.object_errors.count(key) > 0 && o.now < o.objects_retry_at) return;
  action a;
  a.kind = kind;
  a.subject = key;
  a.text = std::move(body);
  out.push_back(std::move(a));
}

void add_wake(const set_observation& o, std::vector<action>& out, std::string key, time_point at) {
  if (o.in_flight.contains(action_kind::wake, key)) return;
  for (const auto& a : out)
    if (a.kind == action_kind::wake && a.subject == key) return;
  action a;
  a.kind = action_kind::wake;
  a.subject = std::move(key);
  a.at = at;
  out.push_back(std::move(a));
}

bool reads_granted(const set_observation& o) { return !o.reads.wanted() || o.reads_granted; }

std::string reads_problem(const set_observation& o) {
  if (reads_granted(o) || o.reads_refusals < reads_refusals_reported) return {};
  return "the API server does not let the manager read Secrets in namespace " + o.set->metadata.namespace_ +
         " through this binding (ClusterRole " + o.reads.cluster_role + ", ServiceAccount " +
         o.reads.account_namespace + "/" + o.reads.account_name +
         "): give the manager `bind` on that ClusterRole and get on Secrets and ConfigMaps in it";
}

namespace {

// The manager's reads in the namespace: asked about once their binding is
// applied (`applied`: known to be, else asked without it), and again after
// a refusal, sooner at first (RBAC sees a new binding a moment after it is
// stored), at most every reference_recheck.
void plan_confirm_reads(const set_observation& o, std::vector<action>& out, bool applied = true) {
  if (reads_granted(o) || o.in_flight.contains(action_kind::confirm_reads) ||
      (applied && o.applied_objects.count(manager_reads_key(o.set->metadata.name)) == 0))
    return;
  const exponential_backoff<std::chrono::steady_clock::duration> backoff{
      std::chrono::milliseconds(100),
      std::max<std::chrono::steady_clock::duration>(o.reference_recheck, std::chrono::milliseconds(100))};
  const auto due = o.reads_refusals == 0 ? o.now : o.reads_refused_at + backoff.delay(o.reads_refusals - 1);
  if (o.now < due) return add_wake(o, out, std::string(reads_wake), due);
  action a;
  a.kind = action_kind::confirm_reads;
  out.push_back(std::move(a));
}

}  // namespace

void plan_reads_for_deletion(const set_observation& o, std::vector<action>& out) {
  if (!o.reads.wanted()) return;
  auto binding = manager_reads_object(*o.set, o.reads);
  if (o.deleted_objects.count(binding.key) > 0) return;  // the deletion's last step
  auto applied = o.applied_objects.find(binding.key);
  if (applied == o.applied_objects.end() || applied->second != binding.body)
    add_object_action(o, out, action_kind::apply_object, binding.key, std::move(binding.body));
  plan_confirm_reads(o, out);
}

void plan_reads_for_drain(const set_observation& o, std::vector<action>& out) {
  if (o.tenant_credentials && !o.credentials_loaded) plan_confirm_reads(o, out, false);
}

// The per-set objects of the runner pods (pod_resources.hpp): each
// desired one applied (again when its body changes), the hooks'
// RoleBinding of containerMode kubernetes deleted once no variant and no
// runner needs it; the objects the pod configuration refers to checked
// every reference_recheck (a missing CA bundle is reported, not waited
// for: the pods start once it exists). Runners are created only while
// the spec is valid and every object is in place.
pod_resources_verdict plan_pod_resources(const set_observation& o, std::vector<action>& out) {
  const auto& set = *o.set;
  model::field_errors invalid;
  model::check_pod_config("spec", set.spec.pod, invalid);
  for (std::size_t i = 0; i < set.spec.variants.size(); ++i)
    if (const auto& mode = set.spec.variants[i].container_mode)
      model::check_container_mode("spec.variants[" + std::to_string(i) + "].containerMode", *mode, invalid);
  if (auto unavailable = kubernetes_rbac_unavailable(set.spec, o.hooks_cluster_role))
    invalid.push_back(std::move(*unavailable));
  bool applied = true;
  const auto desired = desired_pod_resources(set, o.hooks_cluster_role, o.reads);
  for (const auto& obj : desired) {
    auto done = o.applied_objects.find(obj.key);
    if (done != o.applied_objects.end() && done->second == obj.body) continue;
    applied = false;
    add_object_action(o, out, action_kind::apply_object, obj.key, obj.body);
  }
  plan_confirm_reads(o, out);
  const auto unreadable = reads_problem(o);
  pod_resources_verdict v;
  // Runners wait for the reads too: their actors read their JIT Secrets.
  v.pods_ready = applied && reads_granted(o) && invalid.empty();
  // The status waits for the first answers (one write, not Unknown then True).
  v.awaiting_apply =
      (!applied || (!reads_granted(o) && unreadable.empty())) && invalid.empty() && o.object_errors.empty();

  const auto keys = kubernetes_rbac_keys(set.metadata.name);
  if (wants_kubernetes_rbac(set.spec)) {
    // The binding a manager before issue 32 made goes once the current one
    // is in place: a busy runner never goes without its hooks' rights.
    if (applied && !o.hooks_cluster_role.empty())
      for (const auto& key : keys)
        if (o.applied_objects.count(key) == 0 && o.deleted_objects.count(key) == 0)
          add_object_action(o, out, action_kind::delete_object, key);
  } else {
    bool in_use = false;
    for (const auto& [name, r] : o.runners) in_use |= r.kubernetes_mode;
    // Made this run, for runners seen this run, or under a spec this
    // manager has not reconciled yet (changed while it was away).
    const bool maybe_there = o.kubernetes_runners_seen || o.applied_objects.count(keys.front()) > 0 ||
                             set.metadata.generation != set.status.observed_generation;
    if (!in_use && maybe_there)
      for (const auto& key : keys)
        if (o.deleted_objects.count(key) == 0) add_object_action(o, out, action_kind::delete_object, key);
  }

  std::map<std::string, std::string> problems;
  bool fresh = false, fine = true;
  for (const auto& ref : pod_references(set.spec.pod)) {
    auto known = o.reference_problems.find(ref.key);
    if (known == o.reference_problems.end()) {
      fresh = true;  // a new reference
    } else {
      problems.insert(*known);
      fine &= known->second.empty();
    }
  }
  const auto period = fine ? 10 * o.reference_recheck : o.reference_recheck;
  const bool due = reads_granted(o) && (fresh || o.now >= o.references_checked_at + period);
  if (due)
    for (const auto& ref : pod_references(set.spec.pod)) {
      if (o.in_flight.contains(action_kind::check_reference, ref.key)) continue;
      action a;
      a.kind = action_kind::check_reference;
      a.subject = ref.key;
      a.ref = ref;
      out.push_back(std::move(a));
    }
  auto object_errors = o.object_errors;
  if (!unreadable.empty()) object_errors.emplace(manager_reads_key(set.metadata.name), unreadable);
  v.condition = pod_config_condition(invalid, o.runner_crd_problem, object_errors, problems,
                                     applied && reads_granted(o), set.status);
  return v;
}

}  // namespace octorun::runnerset
