// Small statistics and the GitHub simulator's job records, shared by the
// benchmarks and the load-test tool.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace octorun::bench {

// Nearest-rank percentile (p in [0, 1]) and median; 0 for no samples.
double percentile(std::vector<double> v, double p);
double median(const std::vector<double>& v);

// One job as the simulator recorded it (GET /_sim/state, wall-clock ms; 0:
// not yet).
struct sim_job_record {
  std::int64_t id = 0;
  std::string state, runner_name;
  double queued_ms = 0, started_ms = 0, completed_ms = 0;
};
// The jobs of a /_sim/state document; empty when it is not one.
std::vector<sim_job_record> parse_sim_jobs(std::string_view state_json);

}  // namespace octorun::bench
