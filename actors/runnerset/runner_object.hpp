// The Runner a RunnerSet creates for one of its (effective) variants, as
// JSON. Pure and deterministic: golden tests pin its bytes.
#pragma once

#include <string>

#include "model/types.hpp"

namespace octorun::runnerset {

// `suffix`: 5 lowercase alphanumerics chosen by the caller and reused when a
// create is retried, so a retry after a lost reply answers AlreadyExists
// instead of creating a second Runner.
std::string runner_json(const model::runnerset& set, const model::effective_variant& variant,
                        const std::string& suffix);

}  // namespace octorun::runnerset
