// Where a job's time goes: its stages, from the simulator's job records and
// the Runner lifecycle the watches saw, and the manager's own request timings
// (OCTORUN_KUBE_TRACE, adapters/kube/request_trace.hpp).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/common/lifecycle.hpp"
#include "bench/common/stats.hpp"

namespace octorun::bench {

// Stage name -> one duration per job (ms), in the order of a job's life.
using stage_times = std::vector<std::pair<std::string, std::vector<double>>>;

// For each job that ran: queued -> its Runner created -> JIT Secret -> Pod ->
// scheduled -> pod Running -> job started -> phase Running; completed ->
// phase Succeeded -> deletion started -> Runner gone.
stage_times job_stages(const std::vector<sim_job_record>& jobs,
                       const std::map<std::string, runner_times>& runners);

// The trace lines sent between `from_ms` and `to_ms`, by "METHOD kind".
struct request_stats {
  std::string key;
  std::size_t count = 0;
  std::vector<double> queue_ms, limiter_ms, wire_ms;  // queue: only requests through the pool
};
std::vector<request_stats> read_request_trace(const std::string& file, double from_ms, double to_ms);

}  // namespace octorun::bench
