// Whether a RunnerSet keeps to its RunnerClass (pure). The admission
// webhook refuses a set that does not; the manager judges again at use (a
// class or a namespace's labels may change under running sets), sends
// nothing while a set is refused, and starts no new runner while it breaks
// a limit (docs/runner-classes.md).
#pragma once

#include <string>
#include <vector>

#include "model/runner_class.hpp"
#include "model/scope.hpp"
#include "model/types.hpp"

namespace octorun::model {

// What the platform decides beyond its classes (manager flags).
struct class_policy {
  // A set that names no class, with no default class, keeps working under
  // the rules from before classes (its own credentials, any https scope)
  // (--allow-sets-without-class). Off: such a set is refused.
  bool allow_sets_without_class = false;
  scope_rules scopes;  // --github-http-hosts, for every set whatever its class
};

struct class_verdict {
  std::string class_name;  // the class judged by; "" when none applies
  bool classless = false;  // no class, and the platform allows that
  // Where the set would send credentials (the class, the namespace, the
  // server, the scope, the credentials' source): nothing is sent while any.
  field_errors refused;
  // What the set would run (container modes, pod security, counts): no new
  // runner starts while any.
  field_errors limits;
  // The class's podSecurity; unset without a class.
  std::optional<pod_security_level> pod_security;
  // Refused only for where it runs (its namespace, its scope) by a valid
  // class that still allows its server and credentials: nothing new goes to
  // GitHub for it, but the runners it registered there before are removed
  // with those credentials once idle (a class changed under a running set
  // drains it; busy runners finish). Never for a server, class or
  // credentials withdrawn: the set sends nothing at all then.
  bool drains = false;
  bool admitted() const { return refused.empty() && limits.empty(); }
  bool operator==(const class_verdict&) const = default;
};

// The class of a set in namespace `ns` and everything it breaks of it.
class_verdict judge_set(const std::string& ns, const runnerset_spec& spec, const platform_classes& platform,
                        const class_policy& policy);

// The classes marked default (default_class_annotation) whose
// namespaceSelector admits namespace `ns`: a set there that names no class
// gets the one, and must name one when there are several.
std::vector<std::string> default_classes(const std::string& ns, const platform_classes& platform);

// The set's variants as its runners are made under `verdict`: where the
// class asks for baseline or restricted pods, each variant's pod
// configuration says so (pod_config::pod_security), so its runners' pods are
// given that level's securityContext defaults (baseline: the RuntimeDefault
// seccomp profile alone) and a class whose level changes rolls its idle
// runners out like a template change. Privileged asks for no field a
// template leaves out: nothing is added.
std::vector<effective_variant> variants_under(const runnerset_spec& spec, const class_verdict& verdict);

// The credentials a set uses: the class's Secret in the platform's
// namespace, or its own in its namespace. Empty name: none.
struct credentials_location {
  std::string ns;
  std::string name;
  bool platform = false;  // the class's: the set holds no finalizer on it
  bool operator==(const credentials_location&) const = default;
};
credentials_location credentials_of(const std::string& set_ns, const runnerset_spec& spec,
                                    const class_verdict& verdict, const platform_classes& platform,
                                    const std::string& platform_ns);

// How the manager itself connects to GitHub for a set (its REST, scale-set
// and listener clients): under a class, as the class says
// (spec.github.proxy and spec.github.caBundle; what it leaves out, as the
// manager's own), whatever the set's spec.proxy and spec.caBundle say (a
// tenant's: they shape its runner pods only). Served without a class, the
// set's own, as before classes (--allow-sets-without-class).
struct manager_connection {
  std::string class_name;  // whose word it is; "": served without a class
  class_connection by_class;
  std::optional<proxy_spec> set_proxy;  // served without a class only
  std::optional<ca_bundle_ref> set_ca_bundle;
  bool operator==(const manager_connection&) const = default;
};
// None while the set is refused (unless it drains) or not judged yet, or
// its class is gone: nothing is sent for it then.
std::optional<manager_connection> manager_connection_of(const runnerset_spec& spec,
                                                        const std::optional<class_verdict>& verdict,
                                                        const platform_classes& platform);

// What a set's own spec.proxy and spec.caBundle mean under its class, one
// sentence each naming the field and the class (the admission webhook's
// warnings): its runner pods only, and what the manager's connections use
// instead. None without a class, or when the set sets neither.
std::vector<std::string> connection_notes(const runnerset_spec& spec, const class_verdict& verdict,
                                          const platform_classes& platform);

// What a RunnerClass says that the CRD's schema cannot check, each break
// naming its field: servers that are hosts (a wildcard under a domain of at
// least two labels, plain http or an IP address only where `rules` allow),
// scopes that are GitHub scopes on one of the class's servers, a
// credentials Secret's name, a proxy URL that parses and its Secret's name,
// a CA bundle of PEM certificates (its certificates parsed is the
// webhook's, which has OpenSSL), a class some set could use (credentials of
// its own or a tenant's) and dind only with podSecurity privileged (its
// daemon is a privileged container). The admission webhook refuses a class
// that breaks one.
field_errors check_runner_class(const runner_class& c, const scope_rules& rules);

// Whether a scope URL is on one of `servers` (spec.github.servers entries).
bool server_allowed(const std::string& scope_url, const std::vector<std::string>& servers);
bool server_allowed(const github_scope& scope, const std::vector<std::string>& servers);
// Whether a scope URL is one `scopes` (spec.github.scopes entries) admit.
bool scope_allowed(const std::string& scope_url, const std::vector<std::string>& scopes);
bool scope_allowed(const github_scope& scope, const std::vector<std::string>& scopes);

}  // namespace octorun::model
