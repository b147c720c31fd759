// A Runner's status.phase, typed: decoded once when a Runner is read
// (model::parse_runner) and written back with to_string. Who may write which
// phase, and when: actors/runner/phase.hpp (docs/runner-phases.md).
#pragma once

#include <optional>
#include <string_view>

namespace octorun::model {

enum class runner_phase { unset, pending, running, succeeded, failed, outdated };

// "" and the legacy "Unknown" read as unset; any other unknown text is not a
// phase we publish or overwrite (nullopt).
std::optional<runner_phase> parse_runner_phase(std::string_view text);
std::string_view to_string(runner_phase p);  // "" for unset
// Succeeded, Failed, Outdated: nothing ever leaves them.
bool is_terminal(runner_phase p);

}  // namespace octorun::model
