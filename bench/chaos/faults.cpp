// Each fault of the schedule, done to the real parts: the manager processes,
// kube-apiserver and etcd, the kwok node, namespaces and pods through the
// Kubernetes API, and GitHub through the simulator's fault controls. A fault
// holds its lane for its duration (the sleeps below are the faults' lengths,
// never synchronisation); every wait on its outcome is bounded.
#include <chrono>
#include <stdexcept>
#include <thread>

#include "adapters/kube/client.hpp"
#include "bench/chaos/harness.hpp"
#include "test/support/poll.hpp"

namespace octorun::chaos {

using namespace std::chrono_literals;

namespace {

std::string kubectl(env& e, const std::string& args) {
  try {
    return test::kubectl(e.cluster, args);
  } catch (const std::exception& ex) {
    e.tl.add("fault", std::string("kubectl failed: ") + ex.what());
    return {};
  }
}

void hold(std::chrono::seconds d) { std::this_thread::sleep_for(d); }  // the fault lasts this long

std::chrono::seconds between(std::uint32_t pick, int lo, int hi) {
  return std::chrono::seconds(lo + static_cast<int>(pick % static_cast<std::uint32_t>(hi - lo + 1)));
}

void wait_leader(env& e, std::chrono::seconds within) {
  if (!e.managers.wait_leader(within))
    e.observer.add_violation("stuck",
                             "no replica leads " + std::to_string(within.count()) + " s after the fault");
}

bool evict(env& e, bool busy, std::uint32_t pick) {
  auto found =
      test::poll([&] { return e.observer.pods(busy); }, [](const auto& v) { return !v.empty(); }, 30s);
  if (!found.met) return false;
  auto [ns, name] = found.last[pick % found.last.size()];
  e.observer.evicting(ns, name);
  kube::client c(e.admin);
  auto r = c.call("POST", "/api/v1/namespaces/" + ns + "/pods/" + name + "/eviction",
                  R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":")" + name +
                      R"(","namespace":")" + ns + R"("}})");
  e.tl.add("fault", "evicted " + std::string(busy ? "busy" : "idle") + " pod " + ns + "/" + name + ": " +
                        (r ? "ok" : kube::to_string(r.error())));
  return true;
}

void create_node(env& e) {
  kubectl(e,
          "apply -f - >/dev/null <<'EOF'\n"
          R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" +
              std::string(node_name) +
              R"(","annotations":{"kwok.x-k8s.io/node":"fake"},"labels":{"type":"kwok",)"
              R"("kubernetes.io/hostname":")" +
              node_name +
              R"(","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}},)"
              R"("status":{"allocatable":{"cpu":"1000","memory":"4Ti","pods":"10000"},)"
              R"("capacity":{"cpu":"1000","memory":"4Ti","pods":"10000"}}})"
              "\nEOF");
  // New nodes come tainted not-ready; no node lifecycle controller lifts it here.
  kubectl(e, "taint node " + std::string(node_name) +
                 " node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true");
  kubectl(e, "wait --for=condition=Ready node/" + std::string(node_name) + " --timeout=60s >/dev/null");
}

bool delete_namespace(env& e) {
  if (!e.doomed_up) return false;
  e.doomed_up = false;
  e.observer.namespace_deleting(doomed_namespace, true);
  kubectl(e, "delete namespace " + std::string(doomed_namespace) + " --wait=false >/dev/null");
  // Its RunnerSet's finalizer runs first (runners drained, GitHub told).
  auto gone = test::poll(
      [&] {
        return kubectl(e, "get namespace " + std::string(doomed_namespace) + " -o name 2>/dev/null || true");
      },
      [](const std::string& out) { return out.empty(); }, 180s);
  if (!gone.met)
    e.observer.add_violation(
        "stuck", std::string("namespace ") + doomed_namespace + " still exists 180 s after its deletion: " +
                     kubectl(e, "-n " + std::string(doomed_namespace) +
                                    " get runnersets,runners,pods -o name 2>&1 || true"));
  e.observer.namespace_deleting(doomed_namespace, false);
  if (gone.met) create_doomed_namespace(e);
  return true;
}

sim::fault github_fault(const std::string& endpoint, int status, int count) {
  sim::fault f;
  f.endpoint = endpoint;
  f.status = status;
  f.count = count;
  return f;
}

void github_window(env& e, const sim::fault& f, std::chrono::seconds d) {
  e.sim.add_fault(f);
  hold(d);
  e.sim.clear_faults();
}

}  // namespace

bool inject(env& e, const planned_fault& f) {
  const auto p = f.pick;
  switch (f.kind) {
    case fault_kind::leader_kill: {
      if (!e.managers.wait_leader(30s)) return false;
      if (!e.managers.kill_leader(between(p, 2, 15))) return false;
      wait_leader(e, 90s);
      return true;
    }
    case fault_kind::rollout:
      e.managers.rollout();
      wait_leader(e, 90s);
      return true;
    case fault_kind::both_down:
      e.managers.kill_all(e.prof.both_down);
      hold(e.prof.both_down);
      wait_leader(e, 90s);
      return true;
    case fault_kind::apiserver_restart:
      try {
        test::cluster_control(e.cluster, "restart-apiserver");
      } catch (const std::exception& ex) {
        e.tl.add("fault", std::string("apiserver restart failed: ") + ex.what());
      }
      return true;
    case fault_kind::etcd_compaction: {
      auto compacted = test::compact_etcd(e.cluster);
      e.tl.add("fault", compacted ? "etcd compacted" : "etcd compaction failed: " + compacted.error());
      e.proxy.cut();  // the managers' watches resume from compacted revisions: 410, relist
      hold(1s);
      e.proxy.resume();
      return true;
    }
    case fault_kind::watch_cut:
      e.proxy.cut();
      hold(between(p, 1, 3));
      e.proxy.resume();
      return true;
    case fault_kind::evict_busy:
    case fault_kind::evict_idle:
      return evict(e, f.kind == fault_kind::evict_busy, p);
    case fault_kind::node_recreate:
      e.observer.node_gone(true);
      kubectl(e, "delete node " + std::string(node_name) + " --wait=false >/dev/null");
      hold(e.prof.node_gone);  // pod GC takes the pods that were bound to it
      create_node(e);
      hold(10s);  // pod GC's last pass may still land
      e.observer.node_gone(false);
      return true;
    case fault_kind::unschedulable:
      kubectl(e, "taint node " + std::string(node_name) +
                     " chaos.octorun.io/unschedulable=true:NoSchedule >/dev/null");
      hold(between(p, 15, 35));
      kubectl(e, "taint node " + std::string(node_name) + " chaos.octorun.io/unschedulable- >/dev/null");
      return true;
    case fault_kind::namespace_delete:
      return delete_namespace(e);
    case fault_kind::github_5xx:
      github_window(e, github_fault("*", 503, -1), between(p, 10, 25));
      return true;
    case fault_kind::rate_limit_403: {
      auto d = between(p, 10, 20);
      auto f403 = github_fault("*", 403, -1);
      f403.exhausted = true;
      f403.reset_in = d.count();
      github_window(e, f403, d);
      return true;
    }
    case fault_kind::rate_limit_429: {
      auto f429 = github_fault("*", 429, -1);
      f429.retry_after = 5;
      github_window(e, f429, between(p, 10, 20));
    }
      return true;
    case fault_kind::latency: {
      auto slow = github_fault("*", 0, -1);
      slow.latency = 2000ms;
      github_window(e, slow, between(p, 15, 25));
    }
      return true;
    case fault_kind::token_expiry:
      e.sim.expire_tokens();
      return true;
    case fault_kind::session_expiry:
    case fault_kind::session_conflict: {
      int dropped = 0;
      for (const auto& s : e.sim.scale_sets()) dropped += e.sim.drop_session(s.id) ? 1 : 0;
      if (f.kind == fault_kind::session_conflict)
        github_window(e, github_fault("scaleset.create_session", 409, 3), 15s);
      return dropped > 0;
    }
    case fault_kind::duplicate_delivery:
      e.sim.set_delivery_fault({.duplicate = 5});
      hold(10s);
      e.sim.clear_faults();
      return true;
    case fault_kind::reorder_delivery:
      e.sim.set_delivery_fault({.reorder = 3});
      hold(10s);
      e.sim.clear_faults();
      return true;
    case fault_kind::lost_delivery: {
      auto before = e.sim.dropped_deliveries().size();
      e.sim.set_delivery_fault({.drop = 1});
      bool lost = test::poll([&] { return e.sim.dropped_deliveries().size(); },
                             [&](std::size_t n) { return n > before; }, 30s)
                      .met;
      e.sim.clear_faults();
      return lost;
    }
  }
  return false;
}

}  // namespace octorun::chaos
