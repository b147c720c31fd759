// The Kubernetes resources the manager reads and writes.
#pragma once

#include "adapters/kube/api.hpp"

namespace octorun::kinds {

inline kube::resource pods() { return {"", "v1", "pods", true}; }
inline kube::resource secrets() { return {"", "v1", "secrets", true}; }
inline kube::resource runners() { return {"octorun.io", "v1alpha1", "runners", true}; }
inline kube::resource runnersets() { return {"octorun.io", "v1alpha1", "runnersets", true}; }

}  // namespace octorun::kinds
