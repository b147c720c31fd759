// What a load-test run measured, the targets it met or missed, and the
// report directory: summary.txt, summary.json, jobs.tsv, timeline.tsv and,
// with gnuplot, runners.png, jobs.png, latency.png (and rss.png).
// summarize() is pure: the records in, the figures out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/common/lifecycle.hpp"
#include "bench/common/stats.hpp"
#include "bench/loadtest/breakdown.hpp"
#include "bench/loadtest/cost.hpp"
#include "bench/loadtest/options.hpp"

namespace octorun::loadtest {

// One sample every half second while the run lasts.
struct sample {
  double t_s = 0;  // since the first job was queued
  bench::runner_counts runners;
  std::int64_t rss_kib = 0;  // 0: not sampled
};

struct run_record {
  std::string run_id, started_utc, cluster, ns, runnerset, scope_url;
  double start_ms = 0;  // unix ms of the first job queued
  int planned = 0;
  std::vector<bench::sim_job_record> jobs;  // this run's, as the simulator recorded them
  std::map<std::string, bench::runner_times> runners;
  std::map<std::string, pod_marks> pods;           // by Runner
  std::map<std::string, node_marks> nodes;         // the nodes --node-selector picks
  std::map<std::string, double> runner_online_ms;  // by Runner: when the tool brought it online
  std::vector<sample> samples;
  std::size_t max_runners_seen = 0, max_active_runners = 0, max_pods = 0;
  std::map<std::string, std::int64_t> github_calls;                  // during the run
  std::optional<std::map<std::string, std::int64_t>> kube_requests;  // the manager's, during the run
  std::optional<run_cost> cost;  // the run's RunnerSet's, from the manager's counters (--manager-metrics)
  bool timed_out = false;
};

struct target_result {
  std::string name, limit, value;
  bool met = true;
};

struct summary {
  int planned = 0, queued = 0, started = 0, completed = 0;
  double seconds = 0, jobs_per_s = 0;
  std::vector<double> queue_s, gone_s;  // per job: queued -> running, completed -> Runner gone
  double queue_p50 = 0, queue_p95 = 0, queue_p99 = 0, queue_max = 0, gone_p50 = 0, gone_p99 = 0, gone_max = 0;
  std::size_t max_runners = 0, max_active_runners = 0, max_pods = 0;
  int max_runners_spec = 0;
  // GitHub calls by API: REST (api.github.com) and the Actions service's
  // scale-set protocol (sessions, polls, acquires, its JIT configurations).
  double github_calls_per_job = 0, rest_calls_per_job = 0, scale_set_calls_per_job = 0, jit_per_job = 0;
  std::optional<double> writes_per_job, reads_per_job;
  std::optional<double> rss_start_mib, rss_warm_mib, rss_max_mib, rss_end_mib;
  // Queue time by window (steady and ramp runs): start s, jobs, p50, p99.
  struct window {
    double from_s = 0;
    std::size_t jobs = 0;
    double p50 = 0, p99 = 0;
    state_seconds runners;  // runner-seconds by state in the window (the tool's timeline)
  };
  std::vector<window> windows;
  // Where the time went: each job's phases (in the order of run_record::jobs)
  // and their percentiles.
  std::vector<job_phases> job_phases_s;
  std::array<phase_stats, phase_count> phases;
  // The idle cost per completed job: runner-seconds idle by the manager's
  // counters (with --manager-metrics), and node-seconds with no busy runner
  // on the nodes watched (those --node-selector picks), first job queued ->
  // last Runner gone.
  std::optional<double> idle_runner_s_per_job;
  double idle_node_s = 0, idle_node_s_per_job = 0;
  std::size_t nodes_seen = 0;
  // Runner pods whose image pull kwok's stage marked cold or cached.
  std::size_t cold_pulls = 0, cached_pulls = 0;
  std::vector<target_result> targets;
  bool timed_out = false;
  bool passed() const;
};

summary summarize(const run_record& r, const options& o);

std::string summary_text(const run_record& r, const options& o, const summary& s);
std::string summary_json(const run_record& r, const options& o, const summary& s);

// Writes the report directory; returns the files it could not write or plot (empty: all done).
std::vector<std::string> write_report(const std::string& dir, const run_record& r, const options& o,
                                      const summary& s);

}  // namespace octorun::loadtest
