#include "model/namespace_cap.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/rfc3339.hpp"
#include "model/namespace_secrets.hpp"

namespace octorun::model {
namespace {

std::int64_t max_runners_of(const runnerset_spec& spec) {
  std::int64_t total = 0;
  for (const auto& variant : effective_variants(spec)) total += variant.max_runners;
  return total;
}

// The class a listed set is judged by: the one it names, else the
// namespace's one default class ("" when none or several).
std::string class_of(const std::string& ns, const namespace_set& set, const platform_classes& platform) {
  if (!set.runner_class_name.empty()) return set.runner_class_name;
  auto defaults = default_classes(ns, platform);
  return defaults.size() == 1 ? defaults.front() : std::string();
}

// The cap of the class the verdict names; none when it has none.
std::optional<std::int32_t> cap_of(const class_verdict& verdict, const platform_classes& platform) {
  if (verdict.class_name.empty()) return std::nullopt;
  auto c = platform.classes.find(verdict.class_name);
  if (c == platform.classes.end()) return std::nullopt;
  return c->second.spec.max_runners_per_namespace;
}

// The namespace's listed sets under `class_name`.
std::vector<namespace_set> sets_under(const std::string& ns, const std::string& class_name,
                                      const platform_classes& platform) {
  std::vector<namespace_set> out;
  auto listed = platform.namespace_sets.find(ns);
  if (listed == platform.namespace_sets.end()) return out;
  for (const auto& set : listed->second)
    if (class_of(ns, set, platform) == class_name) out.push_back(set);
  return out;
}

field_error over(const std::string& ns, const std::string& class_name, std::int64_t total, std::int32_t cap,
                 const std::string& whose) {
  return {"spec.maxRunners", "takes the sets of namespace \"" + ns + "\" under RunnerClass \"" + class_name +
                                 "\" to " + std::to_string(total) + " runners " + whose + ", more than the " +
                                 std::to_string(cap) +
                                 " the class allows per namespace (spec.maxRunnersPerNamespace)"};
}

}  // namespace

namespace_set namespace_set_of(const object_meta& metadata, const runnerset_spec& spec) {
  return {metadata.name,
          parse_rfc3339(metadata.creation_timestamp),
          spec.runner_class_name,
          max_runners_of(spec),
          spec.credentials_secret_name,
          kubernetes_mode_field(spec)};
}

std::optional<field_error> beyond_namespace_cap(const std::string& ns, const std::string& set_name,
                                                const class_verdict& verdict,
                                                const platform_classes& platform) {
  auto cap = cap_of(verdict, platform);
  if (!cap) return std::nullopt;
  auto sets = sets_under(ns, verdict.class_name, platform);
  // Oldest first; a set not created yet is the youngest.
  std::sort(sets.begin(), sets.end(), older_than);
  std::int64_t total = 0;
  for (const auto& set : sets) {
    total += set.max_runners;
    if (set.name != set_name) continue;
    if (total <= *cap) return std::nullopt;
    return over(ns, verdict.class_name, total, *cap, "with the sets older than it");
  }
  return std::nullopt;
}

std::optional<field_error> breaks_namespace_cap(const std::string& ns, const std::string& set_name,
                                                const runnerset_spec& spec, const class_verdict& verdict,
                                                const platform_classes& platform) {
  auto cap = cap_of(verdict, platform);
  if (!cap) return std::nullopt;
  std::int64_t others = 0, before = 0;
  for (const auto& set : sets_under(ns, verdict.class_name, platform))
    (set.name == set_name ? before : others) += set.max_runners;
  const auto after = max_runners_of(spec);
  if (others + after <= *cap || after <= before) return std::nullopt;
  return over(ns, verdict.class_name, others + after, *cap,
              "(" + std::to_string(others) + " of them the other sets')");
}

std::optional<class_verdict> judge_set_at_use(const std::string& ns, const std::string& set_name,
                                              const runnerset_spec& spec, const platform_classes* platform,
                                              const class_policy& policy) {
  if (platform == nullptr) {
    if (spec.runner_class_name.empty() && policy.allow_sets_without_class)
      return judge_set(ns, spec, {}, policy);
    return std::nullopt;
  }
  auto verdict = judge_set(ns, spec, *platform, policy);
  if (auto over = beyond_namespace_cap(ns, set_name, verdict, *platform))
    verdict.limits.push_back(std::move(*over));
  if (auto shared = shares_secrets_with_kubernetes_mode(ns, set_name, *platform))
    verdict.limits.push_back(std::move(*shared));
  return verdict;
}

}  // namespace octorun::model
