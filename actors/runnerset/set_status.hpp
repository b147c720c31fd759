// The RunnerSet's status as the set publishes it: counts in total and per
// variant, the scale set ids, the CredentialsReady condition. Pure: plan()
// computes it and compares it with what was last written.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "actors/runnerset/plan.hpp"

namespace octorun::runnerset {

// The status object as JSON. `per_variant` null: the counts are unknown
// (credentials not loaded) and only the conditions are written (a merge
// patch leaves the rest as it was). `declared`: the set declares variants.
// `pending`: the GitHub runners whose removal waits for the budget
// (pendingRemovals; none: the field is dropped); null: left as it is.
// `pod_config`: the PodConfigReady condition (pod_resources.hpp), when known.
std::string status_json(const model::runnerset& set, const variant_counts* per_variant, bool declared,
                        bool credentials_loaded, const std::string& credentials_error,
                        bool webhook_intake_enabled = true,
                        const std::map<std::int64_t, deferred_removal>* pending = nullptr,
                        const std::optional<model::condition>& pod_config = std::nullopt);

// The ids in the pendingRemovals of a status status_json() wrote.
std::set<std::int64_t> pending_removal_ids(const std::string& status_text);

}  // namespace octorun::runnerset
