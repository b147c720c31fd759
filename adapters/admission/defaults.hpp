// Defaulting for RunnerSets as JSON Patch operations on the object the
// apiserver sent (pure). Only fields that are absent are added, so applying
// the patch twice changes nothing (reinvocation-safe).
#pragma once

#include <rapidjson/document.h>

#include <vector>

#include "adapters/admission/review.hpp"

namespace octorun::admission {

inline constexpr const char* default_runner_group = "Default";
inline constexpr const char* default_restart_policy = "Never";

// spec.runnerGroup = "Default", spec.minRunners = 0,
// spec.maxRunners = max(minRunners, 10), and restartPolicy Never in the
// set's and each variant's pod template.
std::vector<json_patch_op> runnerset_defaults(const rapidjson::Value& object);

}  // namespace octorun::admission
