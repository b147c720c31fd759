#include "model/runner_phase.hpp"

namespace octorun::model {

std::optional<runner_phase> parse_runner_phase(std::string_view text) {
  if (text.empty() || text == "Unknown") return runner_phase::unset;
  if (text == "Pending") return runner_phase::pending;
  if (text == "Running") return runner_phase::running;
  if (text == "Succeeded") return runner_phase::succeeded;
  if (text == "Failed") return runner_phase::failed;
  if (text == "Outdated") return runner_phase::outdated;
  return std::nullopt;
}

std::string_view to_string(runner_phase p) {
  switch (p) {
    case runner_phase::unset:
      return "";
    case runner_phase::pending:
      return "Pending";
    case runner_phase::running:
      return "Running";
    case runner_phase::succeeded:
      return "Succeeded";
    case runner_phase::failed:
      return "Failed";
    case runner_phase::outdated:
      return "Outdated";
  }
  return "";
}

bool is_terminal(runner_phase p) {
  return p == runner_phase::succeeded || p == runner_phase::failed || p == runner_phase::outdated;
}

}  // namespace octorun::model
