// Where a job's time goes: its stages, from the simulator's job records and
// the Runner lifecycle the watches saw, and the manager's own request timings
// (OCTORUN_KUBE_TRACE, adapters/kube/request_trace.hpp).
#pragma once

#include <algorithm>
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

// One line of the manager's request trace (adapters/kube/request_trace.hpp).
struct trace_entry {
  double sent_ms = 0;  // unix ms when a worker took it (after its queue)
  std::string method, kind, name;
  double queue_ms = -1, limiter_ms = 0, wire_ms = 0;  // queue: -1 when not sent through the pool
  double enqueued_ms() const { return sent_ms - std::max(0.0, queue_ms); }
  double answered_ms() const { return sent_ms + limiter_ms + wire_ms; }
};
// The lines sent between `from_ms` and `to_ms`.
std::vector<trace_entry> read_request_trace(const std::string& file, double from_ms, double to_ms);

// By "METHOD kind".
struct request_stats {
  std::string key;
  std::size_t count = 0;
  std::vector<double> queue_ms, limiter_ms, wire_ms;  // queue: only requests through the pool
};
std::vector<request_stats> request_stats_of(const std::vector<trace_entry>& trace);

// The manager's own delays between an event and the request it leads to
// (the actors' mailboxes and work, no I/O): a job started or completed on
// GitHub -> the Runner actor's read of its Runner queued; that read answered
// -> its status patch queued; the Runner Succeeded (watch) -> the RunnerSet's
// delete of it queued; deletion started -> the Runner actor's pod delete
// queued.
stage_times actor_delays(const std::vector<sim_job_record>& jobs,
                         const std::map<std::string, runner_times>& runners,
                         const std::vector<trace_entry>& trace);

}  // namespace octorun::bench
