// A runner pod template judged against a Pod Security Standards level
// (kubernetes.io/docs/concepts/security/pod-security-standards), as a
// RunnerClass's spec.podSecurity asks (pure).
//
// Baseline refuses what lets a pod reach past its own container: host
// namespaces, hostPath volumes, host ports, privileged containers, added
// capabilities beyond the default set, unsafe sysctls, an Unconfined seccomp
// or AppArmor profile, a non-default /proc mount, Windows host processes,
// and (Octorun's own rule) spec.nodeName, which skips the scheduler and so
// the node pools and taints the platform keeps runners on. Restricted also
// refuses volume types other than the listed ones and what a template sets
// against the restricted rules (allowPrivilegeEscalation true, runAsNonRoot
// false, runAsUser 0, capabilities beyond NET_BIND_SERVICE, a seccomp type
// other than RuntimeDefault or Localhost); fields a template leaves out are
// the namespace's Pod Security admission's to judge.
#pragma once

#include <string>

#include "model/runner_class.hpp"
#include "model/types.hpp"

namespace octorun::model {

// Every rule of `level` the template at `path` (e.g. spec.template) breaks.
field_errors check_pod_security(const std::string& path, const pod_template& t, pod_security_level level);

}  // namespace octorun::model
