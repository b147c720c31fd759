// What a load-test run creates, and their removal: the namespace (when the
// tool made it), the GitHub credentials Secret, the RunnerSet (its Runners,
// pods and JIT Secrets go with it: the manager drains it), the FlowSchemas
// that count the manager's requests, and the simulator's organisation and
// token. Everything is recorded as it is created, so a run that stops at any
// point (a refused preflight, a timeout, Ctrl-C) removes exactly that.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "adapters/kube/client.hpp"
#include "bench/loadtest/options.hpp"
#include "bench/loadtest/simulator_client.hpp"
#include "common/expected.hpp"

namespace octorun::loadtest {

// The label on everything the tool creates in Kubernetes.
inline constexpr const char* managed_by_label = "app.kubernetes.io/managed-by";
inline constexpr const char* managed_by_value = "octorun-loadtest";

// Why a cluster must not be loaded, or nothing: the namespaces of a running
// Octorun test suite (label octorun.io/test-suite, set by the tests'
// make_namespace) or a benchmark's FlowSchemas (octorun-bench-*).
std::optional<std::string> busy_with_tests(kube::client& api);

class run_resources {
 public:
  run_resources(kube::client& api, simulator_client& sim, const options& o, std::string run_id);
  ~run_resources();  // cleanup() if not done
  run_resources(const run_resources&) = delete;
  run_resources& operator=(const run_resources&) = delete;

  const std::string& ns() const { return ns_; }
  const std::string& runnerset() const { return set_; }
  const std::string& scope_url() const { return scope_url_; }
  const std::string& runner_label() const { return label_; }
  const std::string& org() const { return org_; }
  std::string counter_prefix() const { return "octorun-loadtest-" + id_ + "-"; }
  bool counting() const { return counting_; }

  // Each step creates one thing; an error says what and why.
  expected<ok_t, std::string> prepare_simulator(const std::string& advertise_url);
  expected<ok_t, std::string> prepare_namespace();
  expected<ok_t, std::string> create_credentials();
  expected<ok_t, std::string> create_runnerset();
  // FlowSchemas for the manager's user; an error here is a note, not a stop.
  expected<ok_t, std::string> count_manager_requests();

  // What exists now because of the run ("RunnerSet ns/x, Secret ns/y"); empty: nothing.
  std::string created() const;

  // Removes everything created, in order, within `within`; `complete_jobs`
  // finishes this run's jobs still running on the simulator (a busy runner is
  // never deleted). Returns what could not be removed (empty: nothing left).
  std::vector<std::string> cleanup(std::chrono::milliseconds within,
                                   const std::function<void()>& complete_jobs,
                                   const std::atomic<bool>* abandon = nullptr);

 private:
  kube::client& api_;
  simulator_client& sim_;
  const options& o_;
  std::string id_, ns_, set_, secret_, label_, org_, token_, scope_url_;
  bool created_ns_ = false, created_secret_ = false, created_set_ = false, counting_ = false,
       webhook_set_ = false;
  bool cleaned_ = false;
};

}  // namespace octorun::loadtest
