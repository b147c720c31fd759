// A RunnerClass's cap per namespace (spec.maxRunnersPerNamespace): the sum
// of maxRunners over the sets of one namespace under the class must not
// exceed it, so one team's sets together cannot ask the shared manager for
// more runners than the platform gave the namespace. Pure.
//
// Admission refuses a set whose write would break it. Two writes admitted
// side by side (each judged against a list without the other), a class
// tightened under running sets, or sets written while the webhook failed
// open can still leave a namespace over the cap, so the manager judges
// again at use with one order that every replica and every moment agrees
// on: the sets in order of age (creationTimestamp, then name) keep to the
// cap while the sum up to and including them does; from the first that
// breaks it on, the younger sets are over the class's limits (no new
// runners, idle ones go, busy ones finish: model/class_rules.hpp).
#pragma once

#include <optional>
#include <string>

#include "model/class_rules.hpp"
#include "model/runner_class.hpp"
#include "model/types.hpp"

namespace octorun::model {

// The set as the namespace's rules see it (the cap here, its Secrets and
// containerMode kubernetes in namespace_secrets.hpp).
namespace_set namespace_set_of(const object_meta& metadata, const runnerset_spec& spec);

// The manager's judgement of the set `set_name` of namespace `ns`, judged
// by the class `verdict` names: why it is beyond its class's cap, or none
// (no class, no cap, within it, or the set not in the snapshot).
std::optional<field_error> beyond_namespace_cap(const std::string& ns, const std::string& set_name,
                                                const class_verdict& verdict,
                                                const platform_classes& platform);

// The verdict the manager acts on for the set `set_name` of namespace `ns`:
// against the platform's latest snapshot (its class's cap per namespace and
// the namespace's Secrets against containerMode kubernetes included), or, before one came, the rules for a
// set that names no class where the platform serves such sets; nullopt otherwise (not judged yet: the set
// sends nothing and gets no demand). The RunnerSet actor judges its set with it, and the job router every
// set.
std::optional<class_verdict> judge_set_at_use(const std::string& ns, const std::string& set_name,
                                              const runnerset_spec& spec, const platform_classes* platform,
                                              const class_policy& policy);

// Admission's: why writing set `set_name` with `spec` into namespace `ns`
// (whose sets the snapshot lists as they are before the write) breaks its
// class's cap, or none. A write that takes the namespace over the cap is
// refused unless it asks for no more runners under the class than the set
// had (a set over a tightened cap may still be lowered or changed
// otherwise).
std::optional<field_error> breaks_namespace_cap(const std::string& ns, const std::string& set_name,
                                                const runnerset_spec& spec, const class_verdict& verdict,
                                                const platform_classes& platform);

}  // namespace octorun::model
