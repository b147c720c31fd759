#include "actors/runnerset/pod_resources.hpp"

#include <cstdint>
#include <limits>

#include "common/base64.hpp"
#include "common/json.hpp"
#include "common/json_writer.hpp"
#include "model/namespace_secrets.hpp"
#include "model/naming.hpp"

namespace octorun::runnerset {
namespace {

constexpr const char* rbac_api = "rbac.authorization.k8s.io/v1";

// apiVersion, kind, and metadata: name, namespace, the set's label, owned by
// the set unless `owned` is false.
json::writer& header(json::writer& w, const model::runnerset& set, const char* api_version, const char* kind,
                     const std::string& name, bool owned = true) {
  w.open().field("apiVersion", api_version).field("kind", kind);
  w.open("metadata").field("name", name).field("namespace", set.metadata.namespace_);
  w.open("labels").field(model::label_runnerset, set.metadata.name).close();
  if (!owned) return w.close();
  w.open_array("ownerReferences")
      .open()
      .field("apiVersion", model::api_version)
      .field("kind", "RunnerSet")
      .field("name", set.metadata.name)
      .field("uid", set.metadata.uid)
      .field("controller", true)
      .field("blockOwnerDeletion", true)
      .close()
      .close_array();
  return w.close();
}

std::string service_account(const model::runnerset& set) {
  json::writer w;
  header(w, set, "v1", "ServiceAccount", model::runner_service_account_name(set.metadata.name));
  return w.field("automountServiceAccountToken", false).close().str();
}

// The set's ServiceAccount bound, in the set's namespace, to the ClusterRole
// with what the runner container hooks call (the platform's: the chart's
// <fullname>-runner-kubernetes-mode).
std::string hooks_role_binding(const model::runnerset& set, std::string_view cluster_role) {
  json::writer w;
  header(w, set, rbac_api, "RoleBinding", model::hooks_role_binding_name(set.metadata.name));
  w.open("roleRef")
      .field("apiGroup", "rbac.authorization.k8s.io")
      .field("kind", "ClusterRole")
      .field("name", std::string(cluster_role))
      .close();
  w.open_array("subjects")
      .open()
      .field("kind", "ServiceAccount")
      .field("name", model::runner_service_account_name(set.metadata.name))
      .field("namespace", set.metadata.namespace_)
      .close()
      .close_array();
  return w.close().str();
}

// The manager's own ServiceAccount bound, in the set's namespace, to the
// ClusterRole of its reads there; owned by the set until it is deleted.
std::string manager_reads_binding(const model::runnerset& set, const manager_reads& reads) {
  json::writer w;
  header(w, set, rbac_api, "RoleBinding", model::manager_reads_role_binding_name(set.metadata.name),
         !set.metadata.deleting);
  w.open("roleRef")
      .field("apiGroup", "rbac.authorization.k8s.io")
      .field("kind", "ClusterRole")
      .field("name", reads.cluster_role)
      .close();
  w.open_array("subjects")
      .open()
      .field("kind", "ServiceAccount")
      .field("name", reads.account_name)
      .field("namespace", reads.account_namespace)
      .close()
      .close_array();
  return w.close().str();
}

// minAvailable as an integer larger than any number of runners: every
// selected pod must stay. (maxUnavailable 0 says the same, but the
// disruption controller can only compute it for pods whose owner has a
// scale subresource; a Runner has none, so that PDB would fail to sync on
// every change, with a Warning event each time, while still refusing.)
std::string busy_runners_pdb(const model::runnerset& set) {
  json::writer w;
  header(w, set, "policy/v1", "PodDisruptionBudget", model::busy_runners_pdb_name(set.metadata.name));
  w.open("spec").field("minAvailable", std::int64_t{std::numeric_limits<std::int32_t>::max()});
  w.open("selector")
      .open("matchLabels")
      .field(model::label_runnerset, set.metadata.name)
      .field(model::label_busy, "true")
      .close()
      .close();
  return w.close().close().str();
}

std::string key(const char* kind, const std::string& name) { return std::string(kind) + "/" + name; }

}  // namespace

bool wants_kubernetes_rbac(const model::runnerset_spec& spec) {
  for (const auto& v : model::effective_variants(spec))
    if (v.pod.container_mode && v.pod.container_mode->type == model::container_mode::kubernetes &&
        v.template_->service_account_name.empty())
      return true;
  return false;
}

std::optional<model::field_error> kubernetes_rbac_unavailable(const model::runnerset_spec& spec,
                                                              std::string_view hooks_cluster_role) {
  if (!hooks_cluster_role.empty() || !wants_kubernetes_rbac(spec)) return std::nullopt;
  // The containerMode object that asks for it, not its type field.
  auto field = model::kubernetes_mode_field(spec);
  field.erase(field.rfind(".type"));
  return model::field_error{
      std::move(field),
      "type kubernetes needs the ClusterRole the platform installs for the runner container hooks, and "
      "this manager was given none to bind: install the chart with rbac.containerModeKubernetes=true "
      "(--runner-kubernetes-mode-cluster-role), or name a serviceAccountName of your own in the template"};
}

std::optional<std::pair<std::string, std::string>> service_account_of(std::string_view username) {
  constexpr std::string_view prefix = "system:serviceaccount:";
  if (!username.starts_with(prefix)) return std::nullopt;
  username.remove_prefix(prefix.size());
  const auto colon = username.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == username.size() ||
      username.find(':', colon + 1) != std::string_view::npos)
    return std::nullopt;
  return std::pair{std::string(username.substr(0, colon)), std::string(username.substr(colon + 1))};
}

std::string manager_reads_key(std::string_view set) {
  return key("RoleBinding", model::manager_reads_role_binding_name(set));
}

owned_object manager_reads_object(const model::runnerset& set, const manager_reads& reads) {
  return {manager_reads_key(set.metadata.name), manager_reads_binding(set, reads)};
}

std::vector<owned_object> desired_pod_resources(const model::runnerset& set,
                                                std::string_view hooks_cluster_role,
                                                const manager_reads& reads) {
  const auto sa = model::runner_service_account_name(set.metadata.name);
  std::vector<owned_object> out;
  if (reads.wanted()) out.push_back(manager_reads_object(set, reads));
  out.push_back({key("ServiceAccount", sa), service_account(set)});
  if (wants_kubernetes_rbac(set.spec) && !hooks_cluster_role.empty())
    out.push_back({key("RoleBinding", model::hooks_role_binding_name(set.metadata.name)),
                   hooks_role_binding(set, hooks_cluster_role)});
  out.push_back(
      {key("PodDisruptionBudget", model::busy_runners_pdb_name(set.metadata.name)), busy_runners_pdb(set)});
  return out;
}

std::vector<std::string> kubernetes_rbac_keys(std::string_view set) {
  return {key("RoleBinding", model::hooks_role_binding_name(set)),
          key("RoleBinding", model::runner_service_account_name(set))};
}

std::vector<std::string> pod_resource_keys(std::string_view set) {
  auto out = kubernetes_rbac_keys(set);
  out.push_back(key("ServiceAccount", model::runner_service_account_name(set)));
  out.push_back(key("PodDisruptionBudget", model::busy_runners_pdb_name(set)));
  return out;
}

std::string_view key_kind(std::string_view k) { return k.substr(0, k.find('/')); }
std::string_view key_name(std::string_view k) {
  auto slash = k.find('/');
  return slash == std::string_view::npos ? std::string_view{} : k.substr(slash + 1);
}

std::vector<reference> pod_references(const model::pod_config& c) {
  std::vector<reference> out;
  if (c.ca_bundle) {
    const bool config_map = c.ca_bundle->from == model::ca_bundle_ref::source::config_map;
    out.push_back({key(config_map ? "ConfigMap" : "Secret", c.ca_bundle->name),
                   config_map ? "spec.caBundle.configMapKeyRef" : "spec.caBundle.secretKeyRef",
                   {c.ca_bundle->key},
                   true});
  }
  if (c.proxy)
    for (auto [endpoint, field] : {std::pair{&c.proxy->http, "spec.proxy.http.credentialsSecretName"},
                                   std::pair{&c.proxy->https, "spec.proxy.https.credentialsSecretName"}})
      if (*endpoint && !(*endpoint)->credentials_secret_name.empty())
        out.push_back(
            {key("Secret", (*endpoint)->credentials_secret_name), field, {"username", "password"}, false});
  return out;
}

std::string reference_not_found(const reference& ref, const std::string& ns) {
  return ref.field + ": " + std::string(key_kind(ref.key)) + " \"" + std::string(key_name(ref.key)) +
         "\" not found in namespace " + ns;
}

std::optional<std::string> reference_problem(const reference& ref, const rapidjson::Value& object) {
  const bool secret = key_kind(ref.key) == "Secret";
  const std::string what = std::string(key_kind(ref.key)) + " \"" + std::string(key_name(ref.key)) + "\"";
  // ConfigMaps hold text in data (binaryData is not a PEM file); Secrets base64 in data.
  const auto* data = json::find_value(object, "data");
  for (const auto& k : ref.keys) {
    const auto* v = data != nullptr ? json::find_value(*data, k.c_str()) : nullptr;
    if (v == nullptr || !v->IsString()) return ref.field + ": " + what + " has no key \"" + k + "\"";
    if (!ref.pem) continue;
    std::string text(v->GetString(), v->GetStringLength());
    if (secret) text = base64_decode(text).value_or("");
    if (text.find("-----BEGIN CERTIFICATE-----") == std::string::npos)
      return ref.field + ": key \"" + k + "\" of " + what +
             " holds no PEM certificate (-----BEGIN CERTIFICATE-----)";
  }
  return std::nullopt;
}

model::condition pod_config_condition(const model::field_errors& invalid, const std::string& runner_crd,
                                      const std::map<std::string, std::string>& object_errors,
                                      const std::map<std::string, std::string>& reference_problems,
                                      bool applied, const model::runnerset_status& current) {
  model::condition c;
  c.type = "PodConfigReady";
  c.status = "False";
  auto join = [](std::string& into, const std::string& part) { into += (into.empty() ? "" : "; ") + part; };
  for (const auto& e : invalid) join(c.message, e.field + ": " + e.message);
  if (!c.message.empty()) {
    c.reason = "InvalidSpec";
    return c;
  }
  if (!runner_crd.empty()) {
    c.reason = "RunnerCRDOutdated";
    c.message = runner_crd;
    return c;
  }
  for (const auto& [key, why] : object_errors) join(c.message, key + ": " + why);
  if (!c.message.empty()) {
    c.reason = "ApplyFailed";
    return c;
  }
  for (const auto& [key, problem] : reference_problems)
    if (!problem.empty()) join(c.message, problem);
  if (!c.message.empty()) {
    c.reason = "ReferenceInvalid";
    return c;
  }
  if (!applied) {
    for (const auto& old : current.conditions)
      if (old.type == c.type) return old;  // no news yet: say what was said
    c.status = "Unknown";
    c.reason = "Applying";
    c.message = "applying the runner pods' ServiceAccount and PodDisruptionBudget";
    return c;
  }
  c.status = "True";
  c.reason = "Applied";
  c.message = "the runner pods' ServiceAccount and PodDisruptionBudget are in place";
  return c;
}

}  // namespace octorun::runnerset
