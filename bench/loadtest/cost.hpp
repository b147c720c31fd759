// What a run cost, read off the manager's own counters
// (docs/monitoring.md, "Cost"): the runner-seconds busy and idle and the
// requested core- and byte-seconds of the run's RunnerSet, the difference
// between a scrape before the load and one after the last Runner is gone
// (the manager counts a Runner's cost when it goes). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace octorun::loadtest {

struct run_cost {
  double busy_s = 0, idle_s = 0;  // runner-seconds
  double core_s = 0, byte_s = 0;  // requested cores and bytes times seconds
  bool operator==(const run_cost&) const = default;
};

// The sums of octorun_runner_seconds_total (by state),
// octorun_runner_cpu_request_core_seconds_total and
// octorun_runner_memory_request_byte_seconds_total over the series of
// RunnerSet `ns`/`runnerset` in `metrics` (the Prometheus text format).
run_cost cost_in(std::string_view metrics, const std::string& ns, const std::string& runnerset);

// after - before.
run_cost minus(const run_cost& after, const run_cost& before);

}  // namespace octorun::loadtest
