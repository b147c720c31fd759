#include "bench/loadtest/cost.hpp"

#include <cstdlib>

namespace octorun::loadtest {

run_cost cost_in(std::string_view metrics, const std::string& ns, const std::string& runnerset) {
  run_cost out;
  const std::string of_set = "namespace=\"" + ns + "\"";
  const std::string set_name = "runnerset=\"" + runnerset + "\"";
  while (!metrics.empty()) {
    const auto end = metrics.find('\n');
    const auto line = metrics.substr(0, end);
    metrics = end == std::string_view::npos ? std::string_view() : metrics.substr(end + 1);
    const auto close = line.find("} ");
    if (line.starts_with('#') || close == std::string_view::npos) continue;
    const auto series = line.substr(0, close);
    if (series.find(of_set) == std::string_view::npos || series.find(set_name) == std::string_view::npos)
      continue;
    const double value = std::strtod(std::string(line.substr(close + 2)).c_str(), nullptr);
    if (series.starts_with("octorun_runner_seconds_total{"))
      (series.find("state=\"busy\"") != std::string_view::npos ? out.busy_s : out.idle_s) += value;
    else if (series.starts_with("octorun_runner_cpu_request_core_seconds_total{"))
      out.core_s += value;
    else if (series.starts_with("octorun_runner_memory_request_byte_seconds_total{"))
      out.byte_s += value;
  }
  return out;
}

run_cost minus(const run_cost& after, const run_cost& before) {
  return {after.busy_s - before.busy_s, after.idle_s - before.idle_s, after.core_s - before.core_s,
          after.byte_s - before.byte_s};
}

}  // namespace octorun::loadtest
