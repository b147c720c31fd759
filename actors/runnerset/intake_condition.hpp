// The RunnerSet's IntakeReady condition: a set whose demand should come from
// webhook deliveries while the manager runs without the webhook intake
// (--webhook-intake=false) would wait for jobs forever; the condition says so.
// Other sets get no IntakeReady condition (their status is unchanged). Pure.
#pragma once

#include <optional>

#include "model/conditions.hpp"
#include "model/types.hpp"

namespace octorun::runnerset {

std::optional<model::condition> intake_condition(model::intake_mode intake, bool webhook_intake_enabled);

// As the set's other conditions are written (model/conditions.hpp).
using model::condition_json;

}  // namespace octorun::runnerset
