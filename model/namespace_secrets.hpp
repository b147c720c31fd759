// A namespace's Secrets and containerMode kubernetes (pure). The runner
// container hooks a kubernetes-mode runner runs check for `list` and `get`
// on the Secrets of their namespace before every step, and RBAC cannot
// narrow either to names or labels, so the code a job runs there may read
// every Secret of the namespace. A set's own credentials (a tenant's token
// or App key, spec.credentialsSecretName) must therefore never share a
// namespace with kubernetes-mode runners: a set may not use both, and of
// two sets of one namespace that would, the younger may not.
//
// As for the cap per namespace (namespace_cap.hpp), admission refuses the
// write that brings them together, and the manager judges again at use, in
// the order of age every replica agrees on (model::older_than), for what
// admission cannot see: two writes admitted side by side, sets written
// while the webhook failed open, sets from before the rule. The set that
// breaks it is over its class's limits: no new runner starts, idle ones go
// and busy ones finish (model/class_rules.hpp).
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
// credentials or its kubernetes-mode runners share the namespace with the
// other, its own or an older set's; none when they do not, or when the set
// is not in the snapshot.
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
