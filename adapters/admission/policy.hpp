// What the platform admin decides for every RunnerSet and Runner the
// webhook admits (manager flags and RunnerClasses, never a field of the
// objects themselves): who may create Runners, which GitHub hosts a scope
// may name over plain http or as an IP address, the largest runner counts,
// and the RunnerClasses a set must keep to.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/expected.hpp"
#include "model/runner_class.hpp"
#include "model/scope.hpp"

namespace octorun::admission {

struct admission_policy {
  // request.userInfo.username of the one user who creates Runners: the
  // manager. Empty: nobody may (the manager always knows its own name).
  std::string runner_creator;
  model::scope_rules scopes;
  // The largest minRunners, maxRunners and replicas a RunnerSet or variant may ask for.
  std::int32_t max_runners = 1000;
  // --allow-sets-without-class (model::class_policy).
  bool allow_sets_without_class = false;
  // The RunnerClasses and the labels of namespace `ns`, read when a set is
  // judged (platform_lookup.hpp); an error refuses the set (fail closed).
  // Empty: classes are not judged (only tests of the other rules leave it so).
  std::function<expected<model::platform_classes, std::string>(const std::string& ns)> classes;
};

}  // namespace octorun::admission
