// The manager as a Deployment of two replicas would run it: two octorun
// processes sharing one Lease, each restarted when it exits (a container's
// restart policy), killed and replaced by the faults. A supervisor thread
// reaps exits, restarts, and asks each process for the webhook intake it
// serves (its --endpoints-file) and whether it leads (its /readyz); its log
// only feeds the timeline. Bounded: every wait has a deadline.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/chaos/timeline.hpp"
#include "test/binary/binary_harness.hpp"

namespace octorun::chaos {

struct replica_options {
  std::string binary;
  std::string kubeconfig;
  std::string namespaces;  // comma-separated
  std::string lease_namespace;
  std::string webhook_secret;
  std::string log_dir;
  std::string log_level = "info";
};

class replicas {
 public:
  replicas(replica_options o, timeline& tl);
  ~replicas();  // SIGKILLs what still runs
  replicas(const replicas&) = delete;
  replicas& operator=(const replicas&) = delete;

  void start();  // both replicas
  // The webhook intake of the replica that leads now and its log (which
  // names the process); empty when none does.
  struct leader_info {
    std::string intake, log;
  };
  leader_info leader() const;
  // Every running replica's webhook intake (each serves one, the followers
  // in standby), as a Service's endpoints: the relay spreads deliveries
  // over them.
  std::vector<leader_info> serving() const;
  int leader_slot() const;  // -1: none; 2: the replica a rollout is replacing
  bool wait_leader(std::chrono::seconds within) const;

  // Faults. Each returns once its action is done (a kill: at once; the
  // restart follows `restart_after` later, from the supervisor).
  bool kill_leader(std::chrono::seconds restart_after);
  void rollout();  // each slot: a new replica (new identity) up, then SIGTERM the old one
  void kill_all(std::chrono::seconds restart_after);
  // After the run: SIGTERM both, each must exit 0 within 30 s.
  bool stop_all();

  struct memory {
    std::int64_t rss_kib = 0;
    pid_t pid = 0;
    std::string identity;
  };
  std::vector<memory> rss() const;
  int restarts() const { return restarts_; }
  // Exits by a signal the harness did not send, and SIGTERMs not ending in
  // status 0 within 30 s.
  int crashes() const { return crashes_; }

 private:
  struct slot {
    std::string base_identity;
    int generation = 0;  // rollouts
    int incarnation = 0;
    std::unique_ptr<test::octorun_process> proc;
    std::string identity;
    std::string log_path;
    std::size_t log_offset = 0;
    std::string intake;   // once its /readyz said it leads
    std::string serving;  // once its --endpoints-file named its (standby) intake
    bool harness_killed = false;
    std::optional<std::chrono::steady_clock::time_point> restart_at;
  };
  void spawn(slot& s);  // mu_ held
  void supervise();
  void observe(slot& s);   // mu_ held: its intake, and whether it leads
  void scan_log(slot& s);  // mu_ held: lines for the timeline
  bool terminate(std::unique_ptr<test::octorun_process>& p, const std::string& who);

  replica_options o_;
  timeline& tl_;
  mutable std::mutex mu_;
  std::vector<slot> slots_;
  std::optional<slot> retiring_;  // during a rollout: the old replica, still serving
  std::atomic<bool> stop_{false};
  std::atomic<int> restarts_{0}, crashes_{0};
  std::thread supervisor_;
};

}  // namespace octorun::chaos
