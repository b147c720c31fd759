#include "model/namespace_secrets.hpp"

#include <algorithm>
#include <vector>

#include "model/namespace_cap.hpp"

namespace octorun::model {
namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

const char* const why =
    "a kubernetes-mode runner's token may list and read every Secret of its namespace (the runner "
    "container hooks need it), so the jobs it runs could read the credentials";

// Why `set`'s own credentials and kubernetes-mode runners would meet in
// namespace `ns`, given `others`: the sets it is judged against (the older
// ones at use, every other one at admission).
std::optional<field_error> meeting(const std::string& ns, const namespace_set& set,
                                   const std::vector<const namespace_set*>& others) {
  const bool own_credentials = !set.credentials_secret_name.empty();
  const bool kubernetes_mode = !set.kubernetes_mode_field.empty();
  if (own_credentials && kubernetes_mode)
    return field_error{"spec.credentialsSecretName",
                       "must be left out while " + set.kubernetes_mode_field + " is kubernetes: " + why +
                           " in Secret " + quoted(set.credentials_secret_name) +
                           "; use the RunnerClass's credentials, or containerMode none"};
  for (const auto* other : others) {
    if (own_credentials && !other->kubernetes_mode_field.empty())
      return field_error{"spec.credentialsSecretName",
                         "must be left out in namespace " + quoted(ns) + ": RunnerSet " +
                             quoted(other->name) + " runs containerMode kubernetes there, and " + why +
                             "; use the RunnerClass's credentials, or keep kubernetes-mode sets in a "
                             "namespace of their own"};
    if (kubernetes_mode && !other->credentials_secret_name.empty())
      return field_error{set.kubernetes_mode_field,
                         "must not be kubernetes in namespace " + quoted(ns) + ": RunnerSet " +
                             quoted(other->name) + " keeps its credentials there (Secret " +
                             quoted(other->credentials_secret_name) + "), and " + why +
                             "; run kubernetes-mode sets in a namespace that holds no credentials"};
  }
  return std::nullopt;
}

const std::vector<namespace_set>* sets_of(const std::string& ns, const platform_classes& platform) {
  auto listed = platform.namespace_sets.find(ns);
  return listed == platform.namespace_sets.end() ? nullptr : &listed->second;
}

}  // namespace

std::string kubernetes_mode_field(const runnerset_spec& spec) {
  const auto variants = effective_variants(spec);
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const auto& mode = variants[i].pod.container_mode;
    if (!mode || mode->type != container_mode::kubernetes) continue;
    if (spec.variants.empty() || !spec.variants[i].container_mode) return "spec.containerMode.type";
    return "spec.variants[" + std::to_string(i) + "].containerMode.type";
  }
  return "";
}

std::optional<field_error> shares_secrets_with_kubernetes_mode(const std::string& ns,
                                                               const std::string& set_name,
                                                               const platform_classes& platform) {
  const auto* listed = sets_of(ns, platform);
  if (listed == nullptr) return std::nullopt;
  auto self = std::find_if(listed->begin(), listed->end(),
                           [&](const namespace_set& s) { return s.name == set_name; });
  if (self == listed->end()) return std::nullopt;
  std::vector<const namespace_set*> older;
  for (const auto& other : *listed)
    if (older_than(other, *self)) older.push_back(&other);
  std::sort(older.begin(), older.end(), [](const auto* a, const auto* b) { return older_than(*a, *b); });
  return meeting(ns, *self, older);
}

std::optional<field_error> breaks_namespace_secrets(const std::string& ns, const std::string& set_name,
                                                    const runnerset_spec& spec,
                                                    const platform_classes& platform) {
  object_meta meta;
  meta.name = set_name;
  const auto after = namespace_set_of(meta, spec);
  std::vector<const namespace_set*> others;
  if (const auto* listed = sets_of(ns, platform))
    for (const auto& other : *listed) {
      if (other.name != set_name) {
        others.push_back(&other);
        continue;
      }
      if (other.credentials_secret_name == after.credentials_secret_name &&
          other.kubernetes_mode_field.empty() == after.kubernetes_mode_field.empty())
        return std::nullopt;
    }
  std::sort(others.begin(), others.end(), [](const auto* a, const auto* b) { return older_than(*a, *b); });
  return meeting(ns, after, others);
}

}  // namespace octorun::model
