#include "adapters/admission/validation.hpp"

#include <algorithm>
#include <set>

#include "common/json.hpp"
#include "model/naming.hpp"
#include "model/pod_config.hpp"
#include "model/scope.hpp"
#include "model/start_time.hpp"

namespace octorun::admission {
namespace {

using namespace octorun::model;

std::string quoted(const std::string& s) { return "\"" + s + "\""; }
std::string at(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }
std::string characters(std::size_t n) { return std::to_string(n) + (n == 1 ? " character" : " characters"); }

void check_containers(const std::string& path, const std::vector<container_view>& containers,
                      std::set<std::string>& seen, field_errors& out) {
  for (std::size_t i = 0; i < containers.size(); ++i) {
    const auto& c = containers[i];
    if (c.name.empty()) {
      out.push_back({at(path, i) + ".name", "is required"});
    } else if (!is_dns_label(c.name)) {
      out.push_back({at(path, i) + ".name",
                     quoted(c.name) + " is not a valid container name: use lowercase letters, digits and "
                                      "'-', starting and ending with a letter or digit, at most 63"});
    } else if (!seen.insert(c.name).second) {
      out.push_back({at(path, i) + ".name", "duplicate container name " + quoted(c.name)});
    }
    if (c.image.empty())
      out.push_back({at(path, i) + ".image", "is required: every container needs an image"});
  }
}

}  // namespace

void check_scope_url(const std::string& path, const runnerset_spec& spec, const scope_rules& rules,
                     field_errors& out) {
  const auto& url = spec.scope_url;
  if (!spec.scope) return out.push_back({path, (url.empty() ? "" : quoted(url) + " ") + spec.scope_error});
  if (auto refused = scope_host_refused(*spec.scope, rules))
    out.push_back({path, quoted(url) + " " + *refused});
}

void check_credentials_secret(const std::string& path, const std::string& name, field_errors& out) {
  // Whether a set needs one is its RunnerClass's to say (model::judge_set).
  if (!name.empty() && !is_dns_subdomain(name)) {
    out.push_back(
        {path, quoted(name) + " is not a valid Secret name (lowercase letters, digits, '-' and '.')"});
  }
}

void check_runner_labels(const std::string& path, const std::vector<std::string>& labels, field_errors& out) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto& l = labels[i];
    if (l.empty()) {
      out.push_back({at(path, i), "must not be empty"});
    } else if (l.find(',') != std::string::npos) {
      out.push_back({at(path, i), quoted(l) + " must not contain ',': give each label as its own list item"});
    } else if (l.size() > 256) {
      out.push_back(
          {at(path, i), "is " + std::to_string(l.size()) + " characters, over GitHub's limit of 256"});
    } else if (is_registering_set_label(l)) {
      out.push_back({at(path, i), quoted(l) + " is reserved: the manager adds \"" +
                                      std::string(registering_set_label_prefix) +
                                      "<id>\" to every runner a set registers, to tell its runners from "
                                      "other sets'"});
    } else if (!seen.insert(l).second) {
      out.push_back({at(path, i), "duplicate label " + quoted(l)});
    }
  }
}

namespace {

// A count is bounded: one set must not take the shared manager (and the
// cluster) with it. The platform admin may raise the bound.
void check_bound(const std::string& field, const std::optional<std::int32_t>& n, std::int32_t cap,
                 field_errors& out) {
  if (!n) return;
  if (*n < 0) return out.push_back({field, "must not be negative"});
  if (*n > cap)
    out.push_back({field, std::to_string(*n) + " is over the limit of " + std::to_string(cap) +
                              " runners per RunnerSet (the manager's --max-runners, which the platform "
                              "admin may raise)"});
}

// A start-up deadline within the bounds (model::min/max_startup_timeout_seconds).
void check_startup_timeout(const std::string& field, const std::optional<std::int32_t>& seconds,
                           field_errors& out) {
  if (!seconds) return;
  if (*seconds < min_startup_timeout_seconds || *seconds > max_startup_timeout_seconds)
    out.push_back({field, std::to_string(*seconds) + " is outside " +
                              std::to_string(min_startup_timeout_seconds) + ".." +
                              std::to_string(max_startup_timeout_seconds) +
                              " seconds: a runner not online this long after its creation is replaced; "
                              "leave it unset to derive it from the variant's observed start-up times"});
}

// A start-time target names its percentile's seconds, within the bounds
// (model::min/max_start_time_target_seconds).
void check_start_time_target(const std::string& field, const std::optional<start_time_target_spec>& target,
                             field_errors& out) {
  if (!target) return;
  const auto p95 = field + ".p95Seconds";
  if (!target->p95_seconds)
    return out.push_back({p95,
                          "is required: the seconds within which 95 % of the jobs should start after "
                          "being queued"});
  const auto seconds = *target->p95_seconds;
  if (seconds < min_start_time_target_seconds || seconds > max_start_time_target_seconds)
    out.push_back({p95, std::to_string(seconds) + " is outside " +
                            std::to_string(min_start_time_target_seconds) + ".." +
                            std::to_string(max_start_time_target_seconds) +
                            " seconds: the manager keeps warm runners so that 95 % of the jobs start within "
                            "this long after being queued; remove startTimeTarget to keep none beyond "
                            "minRunners"});
}

}  // namespace

void check_runner_counts(const std::string& path, const std::optional<std::int32_t>& min,
                         const std::optional<std::int32_t>& max, std::int32_t cap, field_errors& out) {
  const auto prefix = path.empty() ? std::string{} : path + ".";
  check_bound(prefix + "minRunners", min, cap, out);
  check_bound(prefix + "maxRunners", max, cap, out);
  if (min && max && *min >= 0 && *max >= 0 && *min > *max)
    out.push_back({prefix + "minRunners", "must not exceed maxRunners (" + std::to_string(*min) + " > " +
                                              std::to_string(*max) + ")"});
}

void check_pod_template(const std::string& path, const pod_template& t, field_errors& out) {
  const auto containers = path + ".spec.containers";
  if (t.containers.empty()) {
    out.push_back({containers, "is required: the template needs a container named \"runner\""});
    return;
  }
  if (!t.has_container("runner"))
    out.push_back({containers,
                   "must include a container named \"runner\": the manager starts the GitHub runner "
                   "in it"});
  std::set<std::string> seen;
  check_containers(containers, t.containers, seen, out);
  check_containers(path + ".spec.initContainers", t.init_containers, seen, out);
  if (!t.restart_policy.empty() && t.restart_policy != "Never" && t.restart_policy != "OnFailure")
    out.push_back({path + ".spec.restartPolicy",
                   quoted(t.restart_policy) + " is not allowed: use Never or OnFailure (a runner runs one "
                                              "job, then its pod ends)"});
}

void check_generated_names(const std::string& path, const std::string& set, const std::string& variant,
                           field_errors& out) {
  auto overflow = generated_name_overflow(set, variant);
  if (!overflow) return;
  const auto over = std::to_string(overflow->over());
  out.push_back({path, "is " + characters(overflow->over()) + " too long: generated Runner names like " +
                           quoted(overflow->longest) + " would be " + std::to_string(overflow->length) +
                           " characters, over the limit of " + std::to_string(overflow->limit) +
                           " (they are also Pod names and label values); shorten " +
                           (variant.empty() ? "the RunnerSet name" : "the RunnerSet or variant name") +
                           " by " + over});
}

void check_variants(const runnerset& set, std::int32_t cap, field_errors& out) {
  const auto& spec = set.spec;
  const std::string set_name = set.metadata.name.empty()
                                   ? set.metadata.generate_name + std::string(runner_suffix_length, 'x')
                                   : set.metadata.name;
  std::set<std::string> names;
  for (std::size_t i = 0; i < spec.variants.size(); ++i) {
    const auto& v = spec.variants[i];
    const auto path = at("spec.variants", i);
    if (v.name.empty()) {
      out.push_back({path + ".name", "is required"});
    } else if (!is_dns_label(v.name)) {
      out.push_back({path + ".name",
                     quoted(v.name) + " is not a DNS label: use lowercase letters, digits and '-', starting "
                                      "and ending with a letter or digit, at most 63"});
    } else if (!names.insert(v.name).second) {
      out.push_back({path + ".name", "duplicate variant name " + quoted(v.name)});
    } else if (!set_name.empty()) {
      check_generated_names(path + ".name", set_name, v.name, out);
    }
    check_runner_labels(path + ".runnerLabels", v.runner_labels, out);
    check_runner_counts(path, v.min_runners, v.max_runners, cap, out);
    // A variant's own bound against the one it inherits from the set.
    if (v.min_runners && !v.max_runners && spec.max_runners && *v.min_runners > *spec.max_runners)
      out.push_back({path + ".minRunners", "must not exceed maxRunners inherited from spec.maxRunners (" +
                                               std::to_string(*v.min_runners) + " > " +
                                               std::to_string(*spec.max_runners) + ")"});
    if (v.max_runners && !v.min_runners && spec.min_runners && *spec.min_runners > *v.max_runners)
      out.push_back({path + ".maxRunners", "must not be below minRunners inherited from spec.minRunners (" +
                                               std::to_string(*v.max_runners) + " < " +
                                               std::to_string(*spec.min_runners) + ")"});
    if (v.template_) check_pod_template(path + ".template", *v.template_, out);
    if (v.container_mode) check_container_mode(path + ".containerMode", *v.container_mode, out);
    check_startup_timeout(path + ".startupTimeoutSeconds", v.startup_timeout_seconds, out);
    check_start_time_target(path + ".startTimeTarget", v.start_time_target, out);
  }
  // Jobs are routed by labels: two variants with the same labels are ambiguous.
  auto variants = effective_variants(spec);
  for (std::size_t i = 0; i < variants.size(); ++i) {
    // Each list is bounded by the schema; what a variant's runner registers
    // is both, and the set's label (and, under the Listener intake, the
    // scale set's name: a set without variants has only its own list).
    const std::size_t added = spec.intake == intake_mode::listener ? 2 : 1;
    if (!spec.variants.empty() && variants[i].runner_labels.size() + added > github_max_runner_labels)
      out.push_back({at("spec.variants", i) + ".runnerLabels",
                     "with spec.runnerLabels the variant's runners carry " +
                         std::to_string(variants[i].runner_labels.size()) + " labels, and the manager adds " +
                         std::to_string(added) + ": GitHub registers at most " +
                         std::to_string(github_max_runner_labels) + " on a runner"});
    auto a = variants[i].runner_labels;
    std::sort(a.begin(), a.end());
    for (std::size_t j = 0; j < i && spec.variants.size() > 1; ++j) {
      auto b = variants[j].runner_labels;
      std::sort(b.begin(), b.end());
      if (a == b && !variants[i].name.empty() && variants[i].name != variants[j].name)
        out.push_back({at("spec.variants", i) + ".runnerLabels",
                       "variant " + quoted(variants[i].name) + " carries the same runner labels as variant " +
                           quoted(variants[j].name) +
                           ": give each variant a label that tells its jobs apart"});
    }
  }
}

field_errors validate_runnerset(const runnerset& set, const admission_policy& policy) {
  field_errors out;
  const auto& spec = set.spec;
  if (!set.metadata.name.empty()) {
    check_generated_names("metadata.name", set.metadata.name, "", out);
  } else if (!set.metadata.generate_name.empty()) {
    check_generated_names("metadata.generateName",
                          set.metadata.generate_name + std::string(runner_suffix_length, 'x'), "", out);
  }
  check_scope_url("spec.scopeURL", spec, policy.scopes, out);
  check_credentials_secret("spec.credentialsSecretName", spec.credentials_secret_name, out);
  check_runner_labels("spec.runnerLabels", spec.runner_labels, out);
  check_runner_counts("spec", spec.min_runners, spec.max_runners, policy.max_runners, out);
  check_bound("spec.replicas", spec.replicas, policy.max_runners, out);
  check_startup_timeout("spec.startupTimeoutSeconds", spec.startup_timeout_seconds, out);
  check_start_time_target("spec.startTimeTarget", spec.start_time_target, out);
  check_pod_template("spec.template", spec.template_, out);
  check_pod_config("spec", spec.pod, out);
  check_variants(set, policy.max_runners, out);
  return out;
}

field_errors validate_runner(const runner& r) {
  field_errors out;
  const auto& name = r.metadata.name;
  const auto effective =
      name.empty() ? r.metadata.generate_name + std::string(runner_suffix_length, 'x') : name;
  if (effective.size() > max_label_value)
    out.push_back({name.empty() ? "metadata.generateName" : "metadata.name",
                   "is " + characters(effective.size() - max_label_value) +
                       " too long: a Runner name is also its Pod name and a label value, at most " +
                       std::to_string(max_label_value)});
  if (auto scope = parse_scope_url(r.spec->scope_url); !scope)
    out.push_back({"spec.scopeURL", scope.error()});
  check_credentials_secret("spec.credentialsSecretName", r.spec->credentials_secret_name, out);
  check_runner_labels("spec.runnerLabels", r.spec->runner_labels, out);
  if (!r.spec->variant.empty() && !is_dns_label(r.spec->variant))
    out.push_back({"spec.variant", quoted(r.spec->variant) + " is not a DNS label"});
  check_pod_template("spec.template", r.spec->template_, out);
  check_pod_config("spec", r.spec->pod, out);
  return out;
}

field_errors validate_runner_update(const rapidjson::Value& old_object, const rapidjson::Value& new_object) {
  static const rapidjson::Value null_value;
  auto spec_of = [](const rapidjson::Value& obj) -> const rapidjson::Value& {
    const rapidjson::Value* spec = json::member(obj, "spec");
    return spec == nullptr ? null_value : *spec;
  };
  const auto& before = spec_of(old_object);
  const auto& after = spec_of(new_object);
  if (before == after) return {};
  const std::string why =
      "is immutable: a Runner never changes after creation (labels, annotations and status may); delete it "
      "and "
      "let its RunnerSet create a new one";
  field_errors out;
  // Name the changed fields when both sides are objects; RapidJSON compares deeply.
  if (before.IsObject() && after.IsObject()) {
    std::set<std::string> keys;
    for (auto it = before.MemberBegin(); it != before.MemberEnd(); ++it) keys.insert(it->name.GetString());
    for (auto it = after.MemberBegin(); it != after.MemberEnd(); ++it) keys.insert(it->name.GetString());
    for (const auto& k : keys) {
      auto b = before.FindMember(k.c_str());
      auto a = after.FindMember(k.c_str());
      bool hb = b != before.MemberEnd(), ha = a != after.MemberEnd();
      if (hb != ha || (hb && !(b->value == a->value))) out.push_back({"spec." + k, why});
    }
  }
  if (out.empty()) out.push_back({"spec", why});
  return out;
}

std::string summarize(const std::string& kind, const std::string& name, const field_errors& errors) {
  std::string out = kind + (name.empty() ? std::string{} : " " + quoted(name)) + " is invalid: ";
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (i > 0) out += "; ";
    out += errors[i].field.empty() ? errors[i].message : errors[i].field + ": " + errors[i].message;
  }
  return out;
}

}  // namespace octorun::admission
