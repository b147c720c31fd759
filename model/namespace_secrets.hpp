// A namespace's Secrets and containerMode kubernetes (pure). The runner
// container hooks a kubernetes-mode runner runs check for `list` and `get`
// on the Secrets of their namespace before every step, and RBAC cannot
// narrow either to names or labels, so the code a job runs there may read
// every Secret of the namespace. The credentials a set names of its own
// (a tenant's token or App key, spec.credentialsSecretName) must therefore
// never share a namespace with kubernetes-mode runners.
//
// Admission refuses the write that brings them together: a set naming its
// own credentials and running a variant in kubernetes mode, a
// kubernetes-mode set beside another set's credentials, or a set's
// credentials beside another set's kubernetes mode. The manager judges
// again at use for what admission cannot see (two writes admitted side by
// side, sets written while the webhook failed open, sets from before the
// rule), and there the kubernetes-mode set is held back whichever set is
// older, since its runners are what reads the credentials: it is over its
// class's limits (no new runner starts, idle ones go and busy ones finish:
// model/class_rules.hpp). A Secret no set names (left after its set, or
// made before one) is not judged: it is the tenant's to remove.
#pragma once

#include <optional>
#include <string>

#include "model/runner_class.hpp"
#include "model/types.hpp"

namespace octorun::model {

// The first field of `spec` that runs a variant in containerMode
// kubernetes: "spec.containerMode.type" or
// "spec.variants[I].containerMode.type"; "" when no variant does.
std::string kubernetes_mode_field(const runnerset_spec& spec);

// The manager's judgement of set `set_name` of namespace `ns`: why its
// kubernetes-mode runners would share the namespace with credentials, its
// own or another set's; none when they would not, or when the set is not in
// the snapshot.
std::optional<field_error> shares_secrets_with_kubernetes_mode(const std::string& ns,
                                                               const std::string& set_name,
                                                               const platform_classes& platform);

// Admission's: why writing set `set_name` with `spec` into namespace `ns`
// (whose sets the snapshot lists as they are before the write) brings its
// credentials and kubernetes-mode runners together in the namespace; none
// when it does not, or when the write keeps the set's credentials and modes
// as they were (the manager judges such a set at use).
std::optional<field_error> breaks_namespace_secrets(const std::string& ns, const std::string& set_name,
                                                    const runnerset_spec& spec,
                                                    const platform_classes& platform);

}  // namespace octorun::model
