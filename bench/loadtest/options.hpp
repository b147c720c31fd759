// octorun-loadtest's command line: what to load, where, and the targets a
// run must meet. Parsing is pure; every error names the flag.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace octorun::loadtest {

// How job durations are drawn (milliseconds).
struct distribution {
  enum class kind { fixed, uniform, exponential, lognormal } shape = kind::fixed;
  double a = 0, b = 0;  // fixed: a; uniform: [a, b]; exponential: mean a; lognormal: median a, sigma b
  std::string text;     // as given, for the report
};

// The longest run a working day is compressed into: long enough for nodes
// to come and go several times, short enough to repeat a run (issue 34).
inline constexpr std::chrono::minutes max_workday_duration{30};

// A Kubernetes resource quantity as a pod's requests take it: "500m", "2",
// "1.5", "4Gi", "512Mi".
bool is_quantity(std::string_view s);

// "fixed:0s", "uniform:1s:5s", "exponential:3s", "lognormal:2s:0.8".
expected<distribution, std::string> parse_distribution(std::string_view s);
// "500ms", "2s", "1.5s", "10m", "1h"; a bare number is seconds.
expected<std::chrono::milliseconds, std::string> parse_duration(std::string_view s);

struct profile {
  enum class kind { burst, steady, poisson, ramp, workday, workday_poisson, bursts } shape = kind::burst;
  int jobs = 100;                              // burst, bursts (each), workday (the day's total)
  double rate = 1;                             // steady, poisson: jobs/s
  double rate_from = 0.5, rate_to = 5;         // ramp, jobs/s, linear over `duration`
  std::chrono::milliseconds duration{60'000};  // steady, poisson, ramp, workday, bursts
  std::chrono::milliseconds every{300'000};    // bursts: one every this long
};

// The targets a run must meet (absent: not checked).
struct targets {
  std::optional<double> max_queue_p50_s, max_queue_p99_s, max_gone_p99_s, min_jobs_per_s, max_writes_per_job,
      max_github_calls_per_job, max_rss_mib;
  bool any() const {
    return max_queue_p50_s || max_queue_p99_s || max_gone_p99_s || min_jobs_per_s || max_writes_per_job ||
           max_github_calls_per_job || max_rss_mib;
  }
};

struct options {
  // The cluster and where the run lives.
  std::string kubeconfig, context;
  std::string ns;  // empty: create octorun-loadtest-<run id> (the manager must watch every namespace)
  std::string intake = "Listener";  // the chart's default: no inbound endpoint needed
  int min_runners = 0, max_runners = 20;
  // The set's spec.startTimeTarget.p95Seconds; 0: none (the set keeps
  // minRunners warm and no more).
  int start_time_target_s = 0;
  std::string runner_image = "registry.k8s.io/pause:3.10";
  // The runner pods' requests. Tiny by default so a fake node takes many;
  // real ones (e.g. 2 CPUs, 4Gi) fill the Karpenter cluster's nodes.
  std::string runner_cpu = "10m", runner_memory = "16Mi";
  std::vector<std::string> node_selector;  // key=value
  std::vector<std::string> tolerations;    // key[=value]:Effect, or key:Exists
  // Mark a runner pod's image pull cached when its node pulled the image
  // before (image_cache.hpp). By default on where --node-selector is given
  // (the real-shaped cluster), off elsewhere.
  bool per_node_image_cache = false;
  // GitHub: the simulator.
  std::string simulator_url;  // empty: start one in this process
  std::string simulator_bind = "127.0.0.1";
  int simulator_port = 0;           // 0: any free port
  std::string simulator_advertise;  // the URL the manager reaches it at (default: its own URL)
  std::string webhook_url,
      webhook_secret;  // Webhook intake: the manager's intake, as the simulator reaches it
  // The load.
  profile load;
  distribution durations;
  std::uint64_t seed = 1;
  // The runner process's start-up (container running -> runner online) the
  // tool plays. 0 by default: the default cluster and the measurements
  // logged in README.md have none; the real-shaped cluster's recipe sets it.
  distribution runner_start;
  std::chrono::milliseconds timeout{600'000};          // the whole run, after the last job is queued
  std::chrono::milliseconds manager_timeout{30'000};   // for the manager to take up the RunnerSet
  std::chrono::milliseconds warm_up_timeout{600'000};  // for minRunners runners online before the load
  std::chrono::milliseconds cleanup_timeout{120'000};
  // What to observe.
  int manager_pid = 0;               // a manager on this machine: RSS over time
  std::string manager_user;          // count its Kubernetes writes (FlowSchemas); empty: not counted
  std::string manager_metrics;       // its /metrics URL: the run's cost (octorun_runner_*); empty: not shown
  std::string count_priority_level;  // empty: workload-low for ServiceAccounts, global-default otherwise
  std::string report_dir;            // empty: loadtest-report-<run id>
  bool plots = true;
  targets want;
  bool allow_test_suite = false;  // Octorun's own tests only
  bool help = false;
};

expected<options, std::string> parse_options(int argc, const char* const* argv);
std::string usage();

}  // namespace octorun::loadtest
