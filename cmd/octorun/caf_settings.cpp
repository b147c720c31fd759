#include "cmd/octorun/caf_settings.hpp"

#include <caf/atom.hpp>
#include <caf/settings.hpp>

namespace octorun::manager {
namespace {

// CAF's settings are parsed together, and its error names no option: the
// one it refuses alone is named, as every other bad flag is.
std::string refused_caf_setting(const std::vector<std::string>& args, const caf::error& err,
                                const std::vector<std::string>& remainder) {
  for (const auto& arg : args) {
    caf::actor_system_config probe;
    auto refused = probe.parse(std::vector<std::string>{arg});
    if (!refused && probe.remainder.empty()) continue;
    const auto eq = arg.find('=');
    const auto name = arg.substr(0, eq);
    const auto value = eq == std::string::npos ? std::string() : arg.substr(eq + 1);
    if (refused.category() == caf::atom("parser")) {
      const auto why = static_cast<caf::pec>(refused.code());
      if (why == caf::pec::not_an_option)
        return "unknown CAF setting " + name + " (octorun --help says which CAF settings pass through)";
      return name + ": CAF does not take '" + value + "' (" + caf::to_string(why) + ")";
    }
    return name + ": CAF does not take '" + value + "'" +
           (refused ? " (" + caf::to_string(refused) + ")" : "");
  }
  return "CAF setting: " + (err ? caf::to_string(err) : "not understood: " + remainder.front());
}

// CAF's default scheduler, work stealing, keeps an idle worker polling before
// it rests, so under a steady trickle of messages its workers never rest: in a
// burst that polling took most of the manager's CPU, CPU the apiserver beside
// it lacked, and in a pod it spends the CPU limit on nothing. Work sharing
// waits on a condition variable (the figures: bench/floor/README.md).
void default_scheduler_policy(caf::actor_system_config& cfg) {
  if (caf::get_if(&cfg.content, "scheduler.policy") == nullptr)
    cfg.set("scheduler.policy", caf::atom("sharing"));
}

}  // namespace

std::optional<std::string> configure_caf(caf::actor_system_config& cfg,
                                         const std::vector<std::string>& args) {
  if (auto err = cfg.parse(args); err || !cfg.remainder.empty())
    return refused_caf_setting(args, err, cfg.remainder);
  default_scheduler_policy(cfg);
  return std::nullopt;
}

}  // namespace octorun::manager
