// The chaos harness's view of the world, independent of the manager: its
// own list+watch of Runners and Pods, the simulator's state, and what the
// harness itself did (jobs queued, deliveries relayed, faults). From these
// it plays the runner process in each pod, and checks the invariants
// continuously:
//
//   busy-runner   no pod whose runner is running a job is deleted, unless a
//                 fault of the harness deleted it (eviction, node, namespace);
//                 no Runner whose phase is Running gets a deletionTimestamp
//   one-runner    a job is claimed by one Runner only, the one GitHub ran it on
//   max-runners   non-terminal Runners of a (set, variant) <= its maxRunners
//   phase-order   "" < Pending < Running < terminal; nothing leaves a terminal phase
//   phase-truth   a Runner is not marked Failed while GitHub runs its job, nor
//                 when GitHub says its job succeeded (unless a fault took its pod)
//   stuck         every Runner serves (online on GitHub) or ends within 180 s
//                 of fault-free time (600 s of wall time at most) after its
//                 last progress
//
// and, at the end, that every job ran exactly once or was lost to a fault it
// names (jobs_report).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "adapters/kube/config.hpp"
#include "adapters/kube/object.hpp"
#include "bench/chaos/timeline.hpp"
#include "test/simulator/simulator.hpp"

namespace octorun::chaos {

// One pool of runners: a (RunnerSet, variant) and the jobs that go to it.
struct pool {
  std::string ns, set, variant;  // variant empty: the set has none
  int max_runners = 0;
  bool webhook = false;
  std::vector<std::string> job_labels;
  std::string key() const { return ns + "/" + set + (variant.empty() ? "" : ":" + variant); }
};

struct job_record {
  std::int64_t id = 0;
  std::string pool;
  bool webhook = false;
  double queued_at = 0, started_at = -1, completed_at = -1;
  bool under_fault = false;  // queued while a fault (or its 30 s aftermath) was on
  bool cancel_requested = false;
  std::string state = "queued", result, runner;
  std::vector<std::string> queued_deliveries;  // outcome of each `queued` delivery
};

struct violation {
  double t = 0;
  std::string invariant, text;
};

class world {
 public:
  world(kube::config cfg, sim::simulator& sim, timeline& tl, std::vector<pool> pools);
  ~world();
  world(const world&) = delete;
  world& operator=(const world&) = delete;

  void start();
  void stop();

  // What the harness does, told to the observer.
  void job_queued(std::int64_t id, const std::string& pool, bool webhook);
  void cancel_requested(std::int64_t id);
  // A delivery the relay handled: `accepted_by` the replica's log path, or empty with `failure`.
  void delivery(const std::string& body, const std::string& accepted_by, const std::string& failure);
  void evicting(const std::string& ns, const std::string& pod);
  void node_gone(bool gone);
  void namespace_deleting(const std::string& ns, bool deleting);
  void fault_started();
  void fault_ended();
  bool under_fault() const;

  // Pods whose runner is busy / idle and online, for the eviction faults.
  std::vector<std::pair<std::string, std::string>> pods(bool busy) const;  // (ns, name)

  // Waits until every job has completed or cannot (its loss explained), or the deadline.
  bool drain(std::chrono::seconds within);
  // Runner objects that exist now, per namespace (the observer's view).
  std::size_t runners(const std::string& ns) const;

  // End of run: every job's outcome; violations for jobs lost without a cause.
  struct jobs_summary {
    std::size_t queued = 0, succeeded = 0, canceled = 0, failed_by_fault = 0, lost_known_cause = 0,
                lost_unexplained = 0;
    std::vector<double> queue_all, queue_under_fault, queue_calm;  // seconds, started jobs
    std::map<std::string, std::size_t> lost_by_cause;
  };
  jobs_summary account_jobs();

  std::vector<violation> violations() const;
  void add_violation(const std::string& invariant, const std::string& text);

 private:
  struct runner_view {
    std::string uid, ns, name, pool, phase;
    std::int64_t job = 0;
    bool deleting = false, gone = false, stuck_reported = false;
    double first_seen = 0, last_progress = 0, calm_at_progress = 0;
  };
  struct pod_view {
    std::string uid, ns, name, node;
    bool running = false, deleting = false, onlined = false, exited = false;
  };
  struct sim_runner {
    bool online = false, busy = false;
  };

  void reflect(const std::string& ns, bool pods);
  void on_runner(const kube::object& o, bool deleted);
  void on_pod(const kube::object& o, bool deleted);
  void poll_simulator();
  void check_stuck(double now);
  void check_max(const std::string& pool);                                               // mu_ held
  void check_failed(const std::string& key, const std::string& name, std::int64_t job);  // mu_ held
  void progress(runner_view& r, double now);                                             // mu_ held
  // The runner processes' actions, in order, off the watch threads: one
  // queue for the simulator (online, lost), one for Kubernetes writes (pod
  // exits), so an apiserver outage does not hold runners back from GitHub.
  enum class writer { simulator, kube };
  void act(std::function<void()> f, writer w = writer::simulator);
  void run_emulator(writer w);
  void pod_exits(const std::string& ns, const std::string& name);
  std::string lost_cause(const job_record& j) const;  // mu_ held; empty: no fault explains it
  void record(violation v);                           // mu_ held; also on the timeline at once

  kube::config cfg_;
  sim::simulator& sim_;
  timeline& tl_;
  std::map<std::string, pool> pools_;  // by key

  mutable std::mutex mu_;
  std::map<std::string, runner_view> runners_;  // ns/name
  std::map<std::string, pod_view> pods_;        // ns/name
  std::map<std::string, sim_runner> sim_runners_;
  std::map<std::int64_t, job_record> jobs_;
  std::map<std::int64_t, std::set<std::string>> claims_;  // job -> Runners whose status names it
  std::map<std::string, int> over_max_;                   // pool -> the count last reported over max
  std::set<std::string> evicted_;                         // ns/name
  std::set<std::string> ns_deleting_;                     // namespaces being (or once) deleted by a fault
  std::map<std::string, double> ns_deleted_at_;
  bool node_gone_ = false;
  std::atomic<int> faults_active_{0};
  std::atomic<double> fault_tail_until_{0};
  double calm_seconds_ = 0;  // fault-free time so far (the stuck clock)
  std::vector<violation> violations_;

  struct action_queue {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> actions;
  };
  action_queue queues_[2];

  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace octorun::chaos
