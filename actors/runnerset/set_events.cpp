#include "actors/runnerset/set_events.hpp"

#include "actors/runnerset/class_condition.hpp"
#include "actors/runnerset/intake_condition.hpp"
#include "actors/runnerset/set_status.hpp"
#include "actors/runnerset/start_time.hpp"

namespace octorun::runnerset {
namespace {

using credentials_state = set_summary::credentials_state;

std::string of_variant(const std::string& variant) {
  return variant.empty() ? std::string() : " (variant " + variant + ")";
}

std::string runners(std::int32_t n) { return std::to_string(n) + (n == 1 ? " runner" : " runners"); }

template <class Map>
auto value_or(const Map& m, const typename Map::key_type& key, typename Map::mapped_type fallback) {
  auto it = m.find(key);
  return it == m.end() ? fallback : it->second;
}

set_event normal(std::string reason, std::string action, std::string note) {
  return {false, std::move(reason), std::move(action), std::move(note)};
}
set_event warning(std::string reason, std::string action, std::string note) {
  return {true, std::move(reason), std::move(action), std::move(note)};
}

void credentials_events(const set_summary& before, const set_summary& after, const std::string& secret,
                        std::vector<set_event>& out) {
  if (after.credentials == before.credentials && after.credentials_reason == before.credentials_reason &&
      after.credentials_problem == before.credentials_problem)
    return;
  if (after.credentials == credentials_state::ready)
    out.push_back(normal("CredentialsLoaded", "LoadCredentials",
                         "Loaded the GitHub credentials from Secret " + secret));
  else if (after.credentials == credentials_state::problem && after.credentials_reason == "Invalid")
    out.push_back(warning(
        "CredentialsInvalid", "LoadCredentials",
        "The GitHub credentials of Secret " + secret + " cannot be used: " + after.credentials_problem));
  else if (after.credentials == credentials_state::problem)  // GitHub's answer: the condition's reason
    out.push_back(warning(after.credentials_reason, "CallGitHub", after.credentials_problem));
}

// One Warning when the set's RunnerClass stops admitting it (or for
// another reason), one Normal when it admits it again.
void class_events(const set_summary& before, const set_summary& after, std::vector<set_event>& out) {
  if (after.class_reason == before.class_reason && after.class_problem == before.class_problem) return;
  if (!after.class_reason.empty())
    out.push_back(warning(after.class_reason == "Refused" ? "ClassRefused" : "ClassOverLimits", "JudgeClass",
                          after.class_problem));
  else
    out.push_back(normal("ClassAdmitted", "JudgeClass", "The set keeps to its RunnerClass again"));
}

void scale_events(const set_summary& before, const set_summary& after, std::vector<set_event>& out) {
  for (const auto& [variant, desired] : after.desired) {
    const auto was = value_or(before.desired, variant, 0);
    if (desired == was) continue;
    const bool up = desired > was;
    out.push_back(normal(up ? "ScaledUp" : "ScaledDown", "Scale",
                         std::string(up ? "Scaled up" : "Scaled down") + " from " + std::to_string(was) +
                             " to " + runners(desired) + of_variant(variant)));
  }
}

void registration_events(const set_summary& before, const set_summary& after, std::vector<set_event>& out) {
  for (const auto& [variant, id] : after.scale_sets)
    if (id != 0 && id != value_or(before.scale_sets, variant, 0))
      out.push_back(normal("ScaleSetRegistered", "RegisterScaleSet",
                           "Registered the GitHub scale set " + std::to_string(id) + of_variant(variant)));
  // Credentials GitHub refuses (or a scope it does not show them) fail
  // every registration: the credentials' one Warning says why.
  if (after.credentials == credentials_state::problem) return;
  for (const auto& [variant, why] : after.registration_errors)
    if (!why.empty() && why != value_or(before.registration_errors, variant, std::string()))
      out.push_back(
          warning("RegistrationFailed", "RegisterScaleSet",
                  "The GitHub scale set" + of_variant(variant) + " could not be registered: " + why));
  const auto& why = after.runner_registration_error;
  if (!why.empty() && why != before.runner_registration_error)
    out.push_back(warning("RunnerRegistrationFailed", "RegisterRunner",
                          "GitHub refused a runner's registration (JIT configuration): " + why));
}

// An older set holding one of its scale-set names, and that set gone.
void claim_events(const set_summary& before, const set_summary& after, std::vector<set_event>& out) {
  if (!after.scale_set_name_taken.empty() && after.scale_set_name_taken != before.scale_set_name_taken)
    out.push_back(warning(scale_set_name_taken_reason, "RegisterScaleSet",
                          "No scale set or listener: " + after.scale_set_name_taken));
  if (after.scale_set_name_taken.empty() && !before.scale_set_name_taken.empty())
    out.push_back(
        normal("ScaleSetNameFree", "RegisterScaleSet",
               "Every scale-set name this set registers is its own now: the set that held one is gone"));
}

void drain_events(const set_summary& before, const set_summary& after, std::vector<set_event>& out) {
  for (const auto& variant : after.draining)
    if (before.draining.count(variant) == 0)
      out.push_back(
          normal("DrainingVariant", "Drain",
                 "Variant " + variant +
                     " is no longer declared: its idle runners are removed, busy ones finish their job"));
  for (const auto& variant : before.draining)
    if (after.draining.count(variant) == 0 && after.desired.count(variant) == 0)
      out.push_back(normal("VariantDrained", "Drain", "Variant " + variant + " has no runners left"));
}

void rollout_events(const set_summary& before, const set_summary& after, std::vector<set_event>& out) {
  for (const auto& [variant, outdated] : after.outdated) {
    const auto was = value_or(before.outdated, variant, 0);
    if (was == 0 && outdated > 0)
      out.push_back(normal("RolloutStarted", "Rollout",
                           runners(outdated) + of_variant(variant) + (outdated == 1 ? " was" : " were") +
                               " made from an older template: idle ones are replaced now, busy ones "
                               "after their job"));
    else if (was > 0 && outdated == 0)
      out.push_back(normal("RolloutComplete", "Rollout",
                           "Every runner" + of_variant(variant) + " is made from the current template"));
  }
}

bool version_problem(const std::string& reason) {
  return reason == "RunnerDeprecated" || reason == "BelowMinimum" || reason == "UpdateWindowPassed" ||
         reason == "UpdateWindowEnding";
}

// The runner version (runner_versions.hpp): a Warning when a variant nears
// the end of its update window, falls behind or exits as deprecated; a
// Normal when that ends (the version is current, or inside its window again).
// An update available is said by the condition alone: it comes with every
// release and needs nothing yet.
void version_events(const set_summary& before, const set_summary& after, std::vector<set_event>& out) {
  if (after.version_reason == before.version_reason && after.version_message == before.version_message)
    return;
  if (version_problem(after.version_reason))
    out.push_back(warning(after.version_reason, "CheckRunnerVersion", after.version_message));
  else if (version_problem(before.version_reason) &&
           (after.version_reason == "Current" || after.version_reason == "UpdateAvailable"))
    out.push_back(normal("RunnerVersionAccepted", "CheckRunnerVersion", after.version_message));
}

// The start-time target (start_time.hpp): a Warning when it turns False
// (maxRunners too low, or missed), a Normal when it is met again.
void start_time_events(const set_summary& before, const set_summary& after, std::vector<set_event>& out) {
  if (after.start_time_status == before.start_time_status &&
      after.start_time_reason == before.start_time_reason)
    return;
  if (after.start_time_status == "False")
    out.push_back(
        warning("StartTime" + after.start_time_reason, "KeepWarmRunners", after.start_time_message));
  else if (after.start_time_status == "True" && before.start_time_status == "False")
    out.push_back(normal("StartTimeTargetMet", "KeepWarmRunners", after.start_time_message));
}

// Warm nodes (warm_nodes.hpp): one Warning when they turn off (the API is
// not served, or an apply failed), a Normal when they are asked for again.
void warm_nodes_events(const set_summary& before, const set_summary& after, std::vector<set_event>& out) {
  if (after.warm_nodes_status == before.warm_nodes_status &&
      after.warm_nodes_reason == before.warm_nodes_reason)
    return;
  if (after.warm_nodes_status == "False")
    out.push_back(warning("WarmNodes" + after.warm_nodes_reason, "KeepWarmNodes", after.warm_nodes_message));
  else if (after.warm_nodes_status == "True" && before.warm_nodes_status == "False")
    out.push_back(normal("WarmNodesRequested", "KeepWarmNodes", after.warm_nodes_message));
}

}  // namespace

set_summary summary_from_status(const model::runnerset& set) {
  set_summary s;
  for (const auto& c : set.status.conditions) {
    if (c.type == "ClassAdmitted" && c.status == "False") {
      s.class_reason = c.reason;
      s.class_problem = c.message;
    }
    if (c.type == "IntakeReady" && c.reason == scale_set_name_taken_reason)
      s.scale_set_name_taken = c.message;
    if (c.type == "RunnerVersionCurrent") {
      s.version_reason = c.reason;
      s.version_message = c.message;
    }
    if (c.type == "StartTimeTargetMet") {
      s.start_time_status = c.status;
      s.start_time_reason = c.reason;
      s.start_time_message = c.message;
    }
    if (c.type == "WarmNodesReady") {
      s.warm_nodes_status = c.status;
      s.warm_nodes_reason = c.reason;
      s.warm_nodes_message = c.message;
    }
    if (c.type != "CredentialsReady") continue;
    if (c.status == "True") s.credentials = credentials_state::ready;
    if (c.status == "False") {
      s.credentials = credentials_state::problem;
      s.credentials_reason = c.reason;
      s.credentials_problem = c.message;
    }
  }
  std::set<std::string> declared;
  for (const auto& v : model::effective_variants(set.spec)) declared.insert(v.name);
  if (set.spec.variants.empty()) {
    s.desired[""] = set.status.counts.desired_replicas;
    s.outdated[""] = set.status.counts.outdated_runners;
    if (set.status.scale_set_id != 0) s.scale_sets[""] = set.status.scale_set_id;
  }
  for (const auto& v : set.status.variants) {
    if (declared.count(v.name) == 0) {
      if (v.counts.replicas > 0 || v.counts.failed_runners > 0) s.draining.insert(v.name);
      continue;
    }
    s.desired[v.name] = v.counts.desired_replicas;
    s.outdated[v.name] = v.counts.outdated_runners;
    if (v.scale_set_id != 0) s.scale_sets[v.name] = v.scale_set_id;
  }
  return s;
}

set_summary summarize(const set_summary& previous, const set_observation& o, const set_plan& p) {
  set_summary s = previous;
  // The CredentialsReady condition's own judgement.
  const auto ready = credentials_condition(credentials_facts_of(o));
  if (ready.status == "False") {
    s.credentials = credentials_state::problem;
    s.credentials_reason = ready.reason;
    s.credentials_problem = ready.message;
  } else if (ready.status == "True") {
    s.credentials = credentials_state::ready;
    s.credentials_reason.clear();
    s.credentials_problem.clear();
  }
  if (o.class_verdict) {
    const auto judged = class_condition(*o.class_verdict);
    s.class_reason = judged.status == "False" ? judged.reason : "";
    s.class_problem = judged.status == "False" ? judged.message : "";
  }
  // The counts are known only when the plan made them (credentials loaded).
  if (!p.desired.empty()) {
    s.desired.clear();
    s.outdated.clear();
    s.draining.clear();
    for (const auto& [variant, desired] : p.desired) s.desired[variant] = desired;
    for (const auto& [variant, c] : p.counts) {
      if (s.desired.count(variant) > 0)
        s.outdated[variant] = c.outdated;
      else if (c.replicas > 0 || c.failed > 0)
        s.draining.insert(variant);
    }
  }
  if (!p.desired.empty()) {  // the counts are known: so is the start-time target
    const auto start_time = start_time_condition(&p.counts, o.start_time_rule);
    s.start_time_status = start_time ? start_time->status : "";
    s.start_time_reason = start_time ? start_time->reason : "";
    s.start_time_message = start_time ? start_time->message : "";
    s.warm_nodes_status = p.warm_nodes ? p.warm_nodes->status : "";
    s.warm_nodes_reason = p.warm_nodes ? p.warm_nodes->reason : "";
    s.warm_nodes_message = p.warm_nodes ? p.warm_nodes->message : "";
  }
  if (!p.versions.empty()) {
    const auto version = runner_version_condition(p.versions);
    s.version_reason = version.reason;
    s.version_message = version.message;
  }
  s.runner_registration_error = o.runner_registration_error;
  s.scale_set_name_taken.clear();
  if (o.set)
    if (auto taken = intake_condition(o.set->spec.intake, true, o.taken_scale_sets))
      s.scale_set_name_taken = taken->message;
  for (const auto& [variant, ss] : o.scale_sets) {
    if (ss.id != 0) s.scale_sets[variant] = ss.id;  // 0: not registered this run (yet)
    if (ss.error.empty())
      s.registration_errors.erase(variant);
    else
      s.registration_errors[variant] = ss.error;
  }
  return s;
}

std::vector<set_event> set_events(const set_summary& before, const set_summary& after,
                                  const std::string& secret) {
  std::vector<set_event> out;
  if (before == after) return out;
  class_events(before, after, out);
  credentials_events(before, after, secret, out);
  registration_events(before, after, out);
  claim_events(before, after, out);
  scale_events(before, after, out);
  rollout_events(before, after, out);
  drain_events(before, after, out);
  version_events(before, after, out);
  start_time_events(before, after, out);
  warm_nodes_events(before, after, out);
  return out;
}

}  // namespace octorun::runnerset
