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

// Why `set` would bring its namespace's credentials and kubernetes-mode
// runners together, given the other sets of the namespace (oldest first):
// its own credentials beside its own kubernetes mode, its kubernetes mode
// beside another set's credentials, and, where `credentials_too`, its own
// credentials beside another set's kubernetes mode.
std::optional<field_error> meeting(const std::string& ns, const namespace_set& set,
                                   const std::vector<const namespace_set*>& others, bool credentials_too) {
  const bool own_credentials = !set.credentials_secret_name.empty();
  const bool kubernetes_mode = !set.kubernetes_mode_field.empty();
  if (own_credentials && kubernetes_mode)
    return field_error{"spec.credentialsSecretName",
                       "must be left out while " + set.kubernetes_mode_field + " is kubernetes: " + why +
                           " in Secret " + quoted(set.credentials_secret_name) +
                           "; use the RunnerClass's credentials, or containerMode none"};
  for (const auto* other : others) {
    if (kubernetes_mode && !other->credentials_secret_name.empty())
      return field_error{set.kubernetes_mode_field,
                         "must not be kubernetes in namespace " + quoted(ns) + ": RunnerSet " +
                             quoted(other->name) + " keeps its credentials there (Secret " +
                             quoted(other->credentials_secret_name) + "), and " + why +
                             "; run kubernetes-mode sets in a namespace that holds no credentials"};
    if (credentials_too && own_credentials && !other->kubernetes_mode_field.empty())
      return field_error{"spec.credentialsSecretName",
                         "must be left out in namespace " + quoted(ns) + ": RunnerSet " +
                             quoted(other->name) + " runs containerMode kubernetes there, and " + why +
                             "; use the RunnerClass's credentials, or keep kubernetes-mode sets in a "
                             "namespace of their own"};
  }
  return std::nullopt;
}

std::vector<const namespace_set*> oldest_first(std::vector<const namespace_set*> sets) {
  std::sort(sets.begin(), sets.end(), [](const auto* a, const auto* b) { return older_than(*a, *b); });
  return sets;
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
  const namespace_set* self = nullptr;
  std::vector<const namespace_set*> others;
  for (const auto& set : *listed) {
    if (set.name == set_name)
      self = &set;
    else
      others.push_back(&set);
  }
  if (self == nullptr) return std::nullopt;
  // Whichever came first, the kubernetes-mode set is the one held back: its
  // runners are what reads the credentials.
  return meeting(ns, *self, oldest_first(std::move(others)), false);
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
  return meeting(ns, after, oldest_first(std::move(others)), true);
}

}  // namespace octorun::model
