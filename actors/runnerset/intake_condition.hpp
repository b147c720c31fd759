// The RunnerSet's IntakeReady condition: a set whose demand should come from
// webhook deliveries while the manager runs without the webhook intake
// (--webhook-intake=false) would wait for jobs forever, and a Listener set
// whose scale-set name an older set in the same GitHub scope holds
// (actors/controller/scale_set_claims.hpp) gets no jobs under that name;
// the condition says so (False, reason WebhookIntakeDisabled or
// ScaleSetNameTaken). Other sets get no IntakeReady condition (their status
// is unchanged). Pure.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "messages/scale_sets.hpp"
#include "model/conditions.hpp"
#include "model/types.hpp"

namespace octorun::runnerset {

inline constexpr const char* scale_set_name_taken_reason = "ScaleSetNameTaken";

// `taken`: by variant, the scale-set names the set may not register.
std::optional<model::condition> intake_condition(
    model::intake_mode intake, bool webhook_intake_enabled,
    const std::map<std::string, messages::scale_set_taken>& taken = {});

// As the set's other conditions are written (model/conditions.hpp).
using model::condition_json;

}  // namespace octorun::runnerset
