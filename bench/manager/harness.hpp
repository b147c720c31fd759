// What the manager benchmark measures beyond test/binary/binary_harness.hpp:
// the apiserver's own count of the requests the manager sends (API Priority
// and Fairness flow schemas that match only the manager's user) and the
// manager's memory.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "adapters/kube/config.hpp"
#include "bench/common/stats.hpp"
#include "common/expected.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun::bench {

// The manager runs as its own user ("octorun-test-user", bound to
// cluster-admin) so that the apiserver can tell its requests from those of
// kube-scheduler, kwok and the controller-manager (FlowSchemas
// "octorun-bench-*" count them: bench/common/apiserver_metrics.hpp).
// Returns the kubeconfig the manager uses.
std::string prepare_manager_identity(const test::cluster_info& c, const std::string& dir);

// Requests the manager sent so far, by flow schema suffix ("runners/status
// patch", "reads", ...), from the apiserver's /metrics.
std::map<std::string, std::int64_t> manager_requests(const test::cluster_info& c);

// A bench's control plane (a private one, or OCTORUN_TEST_CLUSTER's) with the
// CRDs, the manager's own identity, and a kubeconfig for the bench's watches.
struct bench_cluster {
  const test::cluster_info& cluster;
  std::string manager_kubeconfig;
  kube::config watch;
};
expected<bench_cluster, std::string> prepare_bench_cluster();

struct memory {
  std::int64_t rss_kib = 0, hwm_kib = 0;
};
memory memory_of(pid_t pid);  // VmRSS and VmHWM from /proc/<pid>/status

double ms(std::chrono::steady_clock::duration d);
// CPU time (user + system) a process has used so far, in seconds; 0 if gone.
double cpu_seconds(pid_t pid);
// The cluster's kube-apiserver (test/controlplane/cluster.sh records it).
pid_t apiserver_pid(const test::cluster_info& c);

// Which runner ran each job, from the simulator's state.
std::map<std::int64_t, std::string> runner_of_jobs(const sim::simulator& s);

}  // namespace octorun::bench
