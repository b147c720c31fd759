// What a RunnerSet is judged against at admission (admission_policy::classes):
// the RunnerClasses, the labels of the set's namespace and its RunnerSets
// (what a class's maxRunnersPerNamespace sums), read from the
// apiserver for each judgement (a set is judged on create and when its spec
// changes: rare next to everything else the apiserver serves).
#pragma once

#include <functional>
#include <string>

#include "adapters/kube/api.hpp"
#include "adapters/kube/config.hpp"
#include "common/expected.hpp"
#include "model/runner_class.hpp"

namespace octorun::admission {

using platform_lookup = std::function<expected<model::platform_classes, std::string>(const std::string& ns)>;

// Reads `runner_classes` (the RunnerClass resource), namespace `ns` and
// its `runner_sets` with the manager's own identity. A class that cannot be
// read is left out (a set naming it is refused as naming no class) and
// logged; a set that cannot be read, or is being deleted, is not counted.
platform_lookup read_platform(kube::config cfg, kube::resource runner_classes, kube::resource runner_sets);

}  // namespace octorun::admission
