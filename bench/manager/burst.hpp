// One burst of jobs through the real octorun binary (see README.md): a fresh
// namespace, simulator and manager process, a RunnerSet, N jobs queued at
// once, and what the run cost and took. Shared by manager_bench and
// floor_bench (which compares it with the floor in the same run).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/common/apiserver_metrics.hpp"
#include "bench/manager/breakdown.hpp"
#include "bench/manager/harness.hpp"
#include "test/binary/binary_harness.hpp"

namespace octorun::bench {

struct burst_options {
  int jobs = 100, max_runners = 20, job_ms = 0;
  std::string intake = "Webhook";         // or Listener
  std::vector<std::string> manager_args;  // added to test::octorun_args (e.g. --kube-qps=0)
  bool trace_requests = false;            // OCTORUN_KUBE_TRACE: the manager's own request timings
  // The simulator's REST budget per token and hour: 5,000 is a PAT's; an App
  // installation's is more (GitHub documents 15,000 on Enterprise Cloud).
  std::int64_t rate_limit = 5000;
  // Namespaces the manager watches besides the set's, each with the
  // credentials Secret (manager_setup::others).
  int other_namespaces = 0;
  std::string binary;  // the octorun binary to run; empty: the one built with the bench
};

// One namespace, simulator and manager process with a RunnerSet "linux"
// (min 0, max `max_runners`) whose first status has been written (and, for
// the Listener intake, whose message session is open); stops them in reverse
// order.
struct manager_setup {
  const test::cluster_info& c;
  std::string ns, log, trace_file;
  std::vector<std::string> others;  // burst_options::other_namespaces
  std::unique_ptr<sim::simulator> sim;
  std::unique_ptr<test::octorun_process> manager;

  manager_setup(const test::cluster_info& cl, const std::string& kubeconfig, const burst_options& o,
                int max_runners);
  ~manager_setup();
  manager_setup(const manager_setup&) = delete;
  manager_setup& operator=(const manager_setup&) = delete;
};

struct burst_result {
  double jobs_per_s = 0, seconds = 0;
  std::vector<double> queued_to_pod, queued_to_pod_first_wave, completed_to_gone;
  std::map<std::string, std::int64_t> requests;  // the manager's, by flow schema, during the burst
  std::int64_t github = 0, jit = 0;
  stage_times stages;                           // where each job's time went (breakdown.hpp)
  std::map<std::string, histogram> apiserver;   // the apiserver's own latency, by verb + resource
  std::vector<request_stats> manager_requests;  // the manager's client timings (trace_requests)
  stage_times actor_delays;                     // from them (breakdown.hpp)
  double manager_cpu_s = 0, apiserver_cpu_s = 0;
};

burst_result run_burst(const bench_cluster& b, const burst_options& o);

// A RunnerSet `name` (runner label `name`, min 0, max `max_runners`) with
// the credentials Secret "github", as the benches create it.
std::string runnerset_json(const std::string& name, const std::string& scope_url, const std::string& intake,
                           int max_runners);

// Where the time went, over every job of `runs`: stages, CPU, the manager's
// request timings (when traced) and the apiserver's latency.
void print_breakdown(const std::vector<burst_result>& runs);

std::int64_t github_calls(const sim::simulator& s);  // REST calls, webhook deliveries excluded

[[noreturn]] void fail(const std::string& why);
// Every option of the benches is `--flag value`: prints `usage` and exits 0
// for --help or -h; fails on a flag without a value, before anything starts.
void check_flag_pairs(int argc, char** argv, const char* usage);

}  // namespace octorun::bench
