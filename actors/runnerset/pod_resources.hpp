// The objects a RunnerSet's runner pods need besides their own children,
// one of each per set, owned by the RunnerSet (docs/runner-pods.md):
//
// - ServiceAccount octorun-runner-<set>: the pods' identity instead of the
//   namespace's default; it mounts no token (containerMode kubernetes turns
//   the token on in its pods, which need it).
// - RoleBinding octorun-hooks-<set>, only while a variant runs in
//   containerMode kubernetes with the set's ServiceAccount: binds that
//   ServiceAccount, in the set's namespace, to the ClusterRole the platform
//   installs with what the runner container hooks call (the chart's
//   <fullname>-runner-kubernetes-mode; --runner-kubernetes-mode-cluster-role).
//   The manager may bind that ClusterRole (RBAC `bind`) and holds none of
//   its rights (docs/runner-pods.md).
// - RoleBinding octorun-reads-<set>, only when the manager was given a
//   ClusterRole for its own reads in tenant namespaces (--tenant-reads-
//   cluster-role; the chart's <fullname>-manager-reads: get on Secrets and
//   ConfigMaps): binds the manager's own ServiceAccount to it in the set's
//   namespace, so that it reads the Secrets and ConfigMaps a set names (its
//   credentials, CA bundle, proxy credentials, its runners' JIT
//   configurations) only in namespaces where a class admitted a set, never
//   in kube-system. Applied first; nothing of the namespace is read before
//   the API server grants it (plan.hpp, reads_granted). Owned by the set
//   while it lives; once the set is being deleted it is applied again
//   without an owner, so that the garbage collector (which takes the
//   dependents of a foreground deletion at once) leaves it to the deletion,
//   which reads the set's credentials to the end and removes it last, just
//   before the set's finalizer.
// - PodDisruptionBudget octorun-busy-<set>: selects the set's pods labelled
//   octorun.io/busy=true (a runner with a job) and allows no disruption, so
//   the Eviction API refuses to evict a busy runner (429) and drains wait
//   for its job; idle runners are not selected and may be evicted.
//
// Bodies are server-side apply patches (create or update in one call).
// Pure and deterministic.
#pragma once

#include <rapidjson/document.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/types.hpp"

namespace octorun::runnerset {

// The manager's own reads in a tenant namespace: the ClusterRole it may bind
// (RBAC `bind`) and its own ServiceAccount. Empty role: none (its RBAC reads
// everywhere it watches, as a Role per namespace does).
struct manager_reads {
  std::string cluster_role;
  std::string account_namespace;
  std::string account_name;
  bool wanted() const { return !cluster_role.empty(); }
};

// The account of a Kubernetes username "system:serviceaccount:NS:NAME"
// (first: namespace, second: name); nullopt for any other user.
std::optional<std::pair<std::string, std::string>> service_account_of(std::string_view username);

struct owned_object {
  std::string key;   // "Kind/name", e.g. "ServiceAccount/octorun-runner-linux" (an action's subject)
  std::string body;  // JSON
};

// True when a variant runs in containerMode kubernetes on the set's own
// ServiceAccount (its template names none): the hooks need the RoleBinding.
bool wants_kubernetes_rbac(const model::runnerset_spec& spec);

// The problem of a set that wants the hooks' RoleBinding from a manager that
// was given no ClusterRole to bind (`hooks_cluster_role` empty); none when it
// needs none or has one.
std::optional<model::field_error> kubernetes_rbac_unavailable(const model::runnerset_spec& spec,
                                                              std::string_view hooks_cluster_role);

// The objects the set's runner pods need now, in the order they are applied;
// the hooks' RoleBinding binds `hooks_cluster_role` (none while it is empty),
// the manager's reads binding binds `reads` (none while not wanted).
std::vector<owned_object> desired_pod_resources(const model::runnerset& set,
                                                std::string_view hooks_cluster_role = {},
                                                const manager_reads& reads = {});
// "RoleBinding/octorun-reads-<set>".
std::string manager_reads_key(std::string_view set);
// The manager's reads binding of the set (desired_pod_resources' first when
// `reads` is wanted); without an owner once the set is being deleted.
owned_object manager_reads_object(const model::runnerset& set, const manager_reads& reads);

// Every key desired_pod_resources may produce for the set but the manager's
// reads binding, and the RoleBinding a manager before issue 32 made (what a
// deletion removes).
std::vector<std::string> pod_resource_keys(std::string_view set);
// The keys of the hooks' RoleBinding: the current one first, then the one a
// manager before issue 32 made (octorun-runner-<set>, to a Role of its own:
// deleted once the current one is in place; that Role, which the manager may
// not delete, is inert without it and goes with the set).
std::vector<std::string> kubernetes_rbac_keys(std::string_view set);

// "Kind" of a key ("ServiceAccount" of "ServiceAccount/x").
std::string_view key_kind(std::string_view key);
std::string_view key_name(std::string_view key);

// The objects a set's pod configuration refers to (a CA bundle, proxy
// credentials), each with the field that names it and what it must hold.
struct reference {
  std::string key;                // "ConfigMap/name" or "Secret/name"
  std::string field;              // e.g. spec.caBundle.configMapKeyRef
  std::vector<std::string> keys;  // data keys it must have
  bool pem = false;               // the (single) key holds PEM certificates
};
std::vector<reference> pod_references(const model::pod_config& c);

// The message for a referenced object that does not exist in namespace `ns`.
std::string reference_not_found(const reference& ref, const std::string& ns);

// What is wrong with `object` (the referenced ConfigMap or Secret as the API
// returned it) for `ref`, in a sentence naming the field; nullopt when it fits.
std::optional<std::string> reference_problem(const reference& ref, const rapidjson::Value& object);

// The set's PodConfigReady condition. False, naming the field or object, for
// the first kind of problem found: the spec breaks a rule the webhook checks
// (`invalid`, reason InvalidSpec), the Runner CRD drops fields of the spec
// (`runner_crd`, RunnerCRDOutdated), a per-set object could not be applied or
// deleted (ApplyFailed), a referenced object is missing or wrong
// (ReferenceInvalid: its pods would not start). True (Applied) once every
// object is applied; until then the condition the status holds, or Unknown.
model::condition pod_config_condition(const model::field_errors& invalid, const std::string& runner_crd,
                                      const std::map<std::string, std::string>& object_errors,
                                      const std::map<std::string, std::string>& reference_problems,
                                      bool applied, const model::runnerset_status& current);

}  // namespace octorun::runnerset
