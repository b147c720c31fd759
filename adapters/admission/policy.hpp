// What the platform admin decides for every RunnerSet and Runner the
// webhook admits (manager flags, never a field of the objects themselves):
// who may create Runners, which GitHub hosts a scope may name over plain
// http or as an IP address, and the largest runner counts.
#pragma once

#include <cstdint>
#include <string>

#include "model/scope.hpp"

namespace octorun::admission {

struct admission_policy {
  // request.userInfo.username of the one user who creates Runners: the
  // manager. Empty: nobody may (the manager always knows its own name).
  std::string runner_creator;
  model::scope_rules scopes;
  // The largest minRunners, maxRunners and replicas a RunnerSet or variant may ask for.
  std::int32_t max_runners = 1000;
};

}  // namespace octorun::admission
