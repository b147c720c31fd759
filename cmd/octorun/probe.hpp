// `octorun probe [--port=N] [--path=/healthz] [--timeout-seconds=N]`: the
// kubelet's exec probe. Asks the manager's probe listener on loopback, which
// nothing outside the pod can reach (docs/security.md), and exits 0 when it
// answers 200 within the timeout, 1 otherwise, 2 on a bad argument.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace octorun::manager {

// `args` after the word "probe". Writes one line saying why to `err`.
int probe(const std::vector<std::string>& args, std::ostream& err);

}  // namespace octorun::manager
