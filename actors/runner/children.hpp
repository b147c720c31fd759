// The objects a Runner owns, built as JSON: its JIT Secret and its Pod.
// Pure and deterministic (same input, same bytes): golden tests pin them.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/expected.hpp"
#include "model/children.hpp"
#include "model/naming.hpp"
#include "model/parse.hpp"
#include "model/types.hpp"

namespace octorun::runner {

// The JIT configuration, its Secret's layout and the runner container: model/children.hpp.
using model::jit_config;
using model::read_jit_secret;
using model::runner_container;

// The environment variable the actions runner reads its JIT configuration from.
inline constexpr const char* jit_config_env = "ACTIONS_RUNNER_INPUT_JITCONFIG";
// Set to "1" in the runner container: a runner GitHub refuses as deprecated
// exits with runner::outdated_exit_code rather than 0.
inline constexpr const char* deprecated_exit_code_env = "ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE";
inline constexpr const char* finalizer = model::runner_finalizer;

// The Secret holding the JIT configuration; owned by the Runner.
std::string jit_secret_json(const model::runner& r, const jit_config& jit);

// The Pod: the Runner's template, named after it, labelled and owned by it,
// restartPolicy Never unless the template says otherwise, and the runner
// container given the JIT configuration from the Secret (never in clear).
// The Runner's pod configuration and the runner image's conventions are
// added where the template leaves them out (pod_features.hpp).
// Fails when the template is not a JSON object or has no runner container.
expected<std::string, std::string> pod_json(const model::runner& r, const std::string& user_agent);

// The merge patch that marks the pod of a runner with a job: the label
// octorun.io/busy the set's PodDisruptionBudget selects (a drain cannot
// evict it), safe-to-evict "false" for the cluster autoscaler and
// do-not-disrupt "true" for Karpenter, each unless the template sets that
// annotation. pod_json sets neither veto, so an idle runner's node can be
// consolidated.
std::string busy_pod_patch(const model::runner& r);

}  // namespace octorun::runner
