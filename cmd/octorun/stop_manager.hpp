// `octorun stop-manager`: what the chart's pre-delete hook runs before Helm
// deletes the release. Helm issues every delete of an uninstall at once, so
// the manager's RoleBinding was gone before its pod got SIGTERM, and the
// leader could not release its Lease (a reinstall then waited out the lease).
// This scales the manager's Deployment to zero and waits until its pods are
// gone: each leaves on SIGTERM with its rights intact, releasing the Lease and
// closing its GitHub sessions.
#pragma once

#include <string>
#include <vector>

#include "common/expected.hpp"

namespace octorun::manager {

struct stop_manager_options {
  std::string kubeconfig;  // empty: in-cluster, else $KUBECONFIG
  std::string ns;
  std::string deployment;
  std::string selector;  // the manager pods' label selector
  int timeout_seconds = 120;
};

// Parses the arguments after `stop-manager`; a clear error for a bad one.
expected<stop_manager_options, std::string> parse_stop_manager(const std::vector<std::string>& args);

// Exit status: 0 when the pods are gone, or when waiting ran out (logged: an
// uninstall must not fail because of it); 1 when the Deployment could not be
// scaled for another reason than being gone already.
int stop_manager(const stop_manager_options& o);

}  // namespace octorun::manager
