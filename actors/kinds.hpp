// The Kubernetes resources the manager reads and writes.
#pragma once

#include "adapters/kube/api.hpp"

namespace octorun::kinds {

inline kube::resource pods() { return {"", "v1", "pods", true}; }
inline kube::resource secrets() { return {"", "v1", "secrets", true}; }
inline kube::resource runners() { return {"octorun.io", "v1alpha1", "runners", true}; }
inline kube::resource runnersets() { return {"octorun.io", "v1alpha1", "runnersets", true}; }
// What the platform decides for RunnerSets (model/runner_class.hpp); cluster-scoped.
inline kube::resource runner_classes() { return {"octorun.io", "v1alpha1", "runnerclasses", false}; }
// A RunnerSet's per-set objects of its runner pods (runnerset/pod_resources.hpp).
inline kube::resource service_accounts() { return {"", "v1", "serviceaccounts", true}; }
inline kube::resource role_bindings() { return {"rbac.authorization.k8s.io", "v1", "rolebindings", true}; }
inline kube::resource pod_disruption_budgets() { return {"policy", "v1", "poddisruptionbudgets", true}; }
// CA bundles the pod configuration refers to.
inline kube::resource config_maps() { return {"", "v1", "configmaps", true}; }
// Warm nodes (runnerset/warm_nodes.hpp): the shape of a chunk, and the buffer of chunks.
inline kube::resource pod_templates() { return {"", "v1", "podtemplates", true}; }
inline kube::resource capacity_buffers() {
  return {"autoscaling.x-k8s.io", "v1beta1", "capacitybuffers", true};
}

// Whether the manager may read a namespace yet (runnerset/pod_resources.hpp, manager_reads).
inline kube::resource self_subject_access_reviews() {
  return {"authorization.k8s.io", "v1", "selfsubjectaccessreviews", false};
}

}  // namespace octorun::kinds
