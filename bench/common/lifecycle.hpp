// The life of every Runner of one namespace as the apiserver's watches show
// it: when each Runner, its JIT Secret and its Pod appeared, reached each
// phase and went away, with wall-clock timestamps (so they line up with the
// GitHub simulator's job timestamps). Plays the runner process too: when a
// runner's pod first runs, `on_pod_running` is called with the Runner's name
// (the caller brings that runner online on the simulator).
//
// Used by the benchmarks (bench/manager, bench/floor) and the load-test tool
// (bench/loadtest). Blocking: list-then-watch on threads of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "adapters/kube/config.hpp"
#include "adapters/kube/object.hpp"

namespace octorun::bench {

double unix_ms_now();  // wall clock, milliseconds

// Whether a Runner in `phase` (status.phase, "" for none) holds one of its
// set's maxRunners slots, by the manager's own rule
// (runnerset::holds_capacity): every Runner that has not ended does, until
// it is gone, being deleted or not.
bool holds_a_slot(const std::string& phase, bool deleting);

// First sightings, in unix milliseconds; 0: not seen.
struct runner_times {
  double created = 0, pending = 0, running = 0, succeeded = 0, failed = 0, deleting = 0, deleted = 0;
  double secret = 0, secret_deleted = 0, pod = 0, pod_scheduled = 0, pod_running = 0, pod_deleted = 0;
};

// Runners that exist now, by what their status says.
struct runner_counts {
  std::size_t total = 0;
  std::size_t starting = 0;  // no phase yet, or Pending with its pod not running
  std::size_t idle = 0;      // Pending, its pod running: online, waiting for a job
  std::size_t busy = 0;      // Running: a job is assigned
  std::size_t finished = 0;  // Succeeded, Failed or Outdated, not yet deleted
  std::size_t deleting = 0;  // deletionTimestamp set
  std::size_t pods = 0;
};

class lifecycle_watch {
 public:
  using pod_running_fn = std::function<void(const std::string& runner)>;

  // `selector`: label selector for Runners, pods and Secrets (empty: every
  // object of the namespace that carries the octorun.io/runner label, for
  // pods and Secrets).
  lifecycle_watch(const kube::config& cfg, const std::string& ns, pod_running_fn on_pod_running,
                  const std::string& selector = {});
  ~lifecycle_watch();
  lifecycle_watch(const lifecycle_watch&) = delete;
  lifecycle_watch& operator=(const lifecycle_watch&) = delete;

  std::map<std::string, runner_times> times() const;
  runner_counts counts() const;
  std::size_t max_runners() const;         // most Runners that existed at once
  std::size_t max_active_runners() const;  // ... of them holding a slot (holds_a_slot)
  std::size_t max_pods() const;            // most runner pods at once
  std::size_t runners_seen() const;
  bool synced() const;  // every watch has listed once

  // Waits until `pred` holds (checked on every event) or `within` passes, or
  // `stop` is set.
  bool wait(const std::function<bool(const lifecycle_watch&)>& pred, std::chrono::milliseconds within,
            const std::atomic<bool>* stop = nullptr) const;

 private:
  enum class kind { runner, pod, secret };
  void on_object(kind k, const kube::object& o, bool deleted);
  void on_runner(const kube::object& o, bool deleted, double now);
  void on_pod(const kube::object& o, bool deleted, double now);

  pod_running_fn on_pod_running_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::map<std::string, runner_times> times_;
  struct runner_state {
    std::string phase;
    bool deleting = false;
  };
  std::map<std::string, runner_state> runners_;  // existing Runners
  std::map<std::string, bool> pods_;             // existing runner pods (by Runner): running
  std::size_t max_runners_ = 0, max_active_ = 0, max_pods_ = 0, runners_seen_ = 0;
  int synced_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace octorun::bench
