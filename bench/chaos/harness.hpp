// What the chaos harness's parts share: the cluster, the simulator, the
// manager replicas, the observer, the proxy in front of the apiserver, and
// the fault counters. Built once by main.cpp.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>

#include "adapters/kube/config.hpp"
#include "bench/chaos/replicas.hpp"
#include "bench/chaos/schedule.hpp"
#include "bench/chaos/timeline.hpp"
#include "bench/chaos/world.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/cluster_faults.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun::chaos {

inline constexpr const char* node_name = "kwok-node-0";
inline constexpr const char* doomed_namespace = "chaos-b";

struct env {
  env(const test::cluster_info& c, kube::config a, sim::simulator& s, replicas& m, world& w, timeline& t,
      test::tcp_proxy& p, const profile& pr, std::string scope, std::string token, std::string key)
      : cluster(c),
        admin(std::move(a)),
        sim(s),
        managers(m),
        observer(w),
        tl(t),
        proxy(p),
        prof(pr),
        scope_url(std::move(scope)),
        pat(std::move(token)),
        app_private_key(std::move(key)) {}

  const test::cluster_info& cluster;
  kube::config admin;
  sim::simulator& sim;
  replicas& managers;
  world& observer;
  timeline& tl;
  test::tcp_proxy& proxy;
  const profile& prof;
  std::string scope_url;
  std::string pat;
  std::string app_private_key;
  std::atomic<bool> doomed_up{false};  // chaos-b and its RunnerSet exist: its jobs may be queued

  std::mutex mu;
  std::map<fault_kind, int> injected, skipped;
  void count(fault_kind k, bool done) {
    std::lock_guard l(mu);
    ++(done ? injected : skipped)[k];
  }
};

// The namespace that the namespace-delete fault takes: chaos-b with its
// PAT Secret and the Webhook RunnerSet "doomed" (minRunners 1).
void create_doomed_namespace(env& e);

// Runs one fault to its end (bounded); false when it had no target (skipped).
bool inject(env& e, const planned_fault& f);

}  // namespace octorun::chaos
