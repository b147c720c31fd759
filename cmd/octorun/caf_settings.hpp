// CAF's own settings (--scheduler.max-threads=2, --config-file=x.ini, ...):
// read into the actor system's configuration with the manager's defaults,
// and a refusal named as every other bad flag is.
#pragma once

#include <caf/actor_system_config.hpp>
#include <optional>
#include <string>
#include <vector>

namespace octorun::manager {

// Parses `args` (options::caf_args) into `cfg` and then sets the manager's
// defaults for what neither the command line nor a --config-file chose.
// Returns why CAF refused a setting, naming it.
std::optional<std::string> configure_caf(caf::actor_system_config& cfg, const std::vector<std::string>& args);

}  // namespace octorun::manager
