// Test wiring for the manager's actors: informers whose events all go to one
// actor (what the controller does for real, routing by owner).
#pragma once

#include <gtest/gtest.h>

#include <caf/all.hpp>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "actors/kinds.hpp"
#include "actors/watched.hpp"
#include "adapters/kube/config.hpp"
#include "adapters/kube/informer.hpp"
#include "adapters/kube/protocol.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"

namespace octorun::test {

struct watched {
  kube::resource res;
  std::string label_selector;
  std::string field_selector;
};

// Forwards every event to `target` in the order the controller guarantees:
// a Runner's events once the Pods have listed (its actor would otherwise
// take a Runner whose pod it has not seen for one without one),
// a RunnerSet's once the Runners have listed (a set that planned before
// would count none of its Runners). An informer not given: nothing waits
// for it.
struct forward_state {
  std::set<caf::actor_addr> children;  // Pods informers not listed yet
  caf::actor_addr runners;             // the Runners informer, until it has listed
  std::vector<::octorun::watched::runner_event> held_runners;
  std::vector<::octorun::watched::runnerset_event> held_sets;
  bool children_listed() const { return children.empty(); }
  bool runners_listed() const { return children_listed() && !runners; }
};

inline caf::behavior forward_to(caf::stateful_actor<forward_state>* self, caf::actor target,
                                std::set<caf::actor_addr> children, caf::actor_addr runners) {
  self->state.children = std::move(children);
  self->state.runners = std::move(runners);
  return {
      [=](::octorun::watched::runnerset_event& ev) {
        if (self->state.runners_listed())
          caf::anon_send(target, std::move(ev));
        else
          self->state.held_sets.push_back(std::move(ev));
      },
      [=](::octorun::watched::runner_event& ev) {
        if (self->state.children_listed())
          caf::anon_send(target, std::move(ev));
        else
          self->state.held_runners.push_back(std::move(ev));
      },
      [=](::octorun::watched::pod_event& ev) { caf::anon_send(target, std::move(ev)); },
      [=](kube::informer_synced&) {
        auto& st = self->state;
        const auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
        st.children.erase(from);
        if (from == st.runners) st.runners = nullptr;
        if (st.children_listed()) {
          for (auto& ev : st.held_runners) caf::anon_send(target, std::move(ev));
          st.held_runners.clear();
        }
        if (st.runners_listed()) {
          for (auto& ev : st.held_sets) caf::anon_send(target, std::move(ev));
          st.held_sets.clear();
        }
      },
  };
}

// The manager's typed informer for `res` (one of the three kinds it watches).
inline caf::actor spawn_watch(caf::actor_system& sys, const kube::config& cfg, kube::informer_options io) {
  namespace w = ::octorun::watched;
  const auto& plural = io.res.plural;
  auto spawn = plural == "runnersets" ? w::watch_runnersets
               : plural == "runners"  ? w::watch_runners
                                      : static_cast<decltype(&w::watch_runners)>(w::watch_pods);
  EXPECT_TRUE(plural == "runnersets" || plural == "runners" || plural == "pods") << plural;
  return spawn(sys, cfg, {}, std::move(io));
}

// Sends `target` what the manager's typed informer for `res` delivers for
// `obj` as an ADDED event (as a new leader's list would).
inline void send_as_watched(const caf::actor& target, const kube::resource& res, const kube::object& obj) {
  namespace w = ::octorun::watched;
  const auto added = kube::event_type::added;
  const auto& plural = res.plural;
  if (plural == "runnersets")
    caf::anon_send(target, w::runnerset_event{res.id(), added, w::read_runnerset(obj)});
  else if (plural == "runners")
    caf::anon_send(target, w::runner_event{res.id(), added, w::read_runner(obj)});
  else if (plural == "pods")
    caf::anon_send(target, w::pod_event{res.id(), added, w::read_pod(obj)});
  else
    ADD_FAILURE() << "not a kind the manager watches: " << plural;
}

// One typed informer per entry (as the controller spawns them), in `ns`,
// forwarding to `target` in the controller's order (forward_to). Stop the returned
// actors with anon_send_exit when done.
inline std::vector<caf::actor> forward_informers(caf::actor_system& sys, const kube::config& cfg,
                                                 const std::string& ns, const std::vector<watched>& what,
                                                 caf::actor target) {
  std::vector<caf::actor> out;
  std::set<caf::actor_addr> children;
  caf::actor_addr runners;
  for (const auto& w : what) {
    kube::informer_options io;
    io.res = w.res;
    io.ns = ns;
    io.label_selector = w.label_selector;
    io.field_selector = w.field_selector;
    out.push_back(spawn_watch(sys, cfg, io));
    if (w.res.plural == "runners") runners = out.back().address();
    if (w.res.plural == "pods") children.insert(out.back().address());
  }
  auto fwd = sys.spawn(forward_to, target, std::move(children), runners);
  for (const auto& inf : out) caf::anon_send(inf, kube::subscribe_atom::value, fwd);
  return out;
}

// The informers the controller runs for the RunnerSet "linux" in `ns`: the
// set, its Runners and their Pods, forwarding to its actor `set`.
inline std::vector<caf::actor> forward_set_informers(caf::actor_system& sys, const kube::config& cfg,
                                                     const std::string& ns, caf::actor set) {
  const std::string mine = "octorun.io/runnerset=linux";
  return forward_informers(sys, cfg, ns,
                           {{kinds::runnersets(), "", "metadata.name=linux"},
                            {kinds::runners(), mine, ""},
                            {kinds::pods(), mine, ""}},
                           std::move(set));
}

// How a test's RunnerSet "linux" differs from the usual one.
struct runnerset_options {
  // Webhook: the tests drive the set with the simulator's deliveries, not the
  // CRD's default intake.
  std::string intake = "Webhook";
  // More spec members, each followed by a comma (e.g. R"("containerMode":{"type":"dind"},)").
  std::string extra_spec;
  // The pod template carries kwok's custom-status annotation: kwok leaves the
  // set's pods alone and the test plays their status.
  bool test_plays_pod_status = false;
};

// Creates the credentials Secret "github" (the simulator's PAT) and the
// RunnerSet "linux" (runner label "linux", one runner container, and what
// `opts` says) in `ns`; returns the RunnerSet as the apiserver stored it.
inline std::string create_runnerset(const cluster_info& c, const std::string& ns,
                                    const std::string& scope_url, int min_runners, int max_runners,
                                    const runnerset_options& opts = {}) {
  kubectl(c,
          "-n " + ns + " create secret generic github --from-literal=github_token=ghp_simulator >/dev/null");
  const std::string template_metadata =
      opts.test_plays_pod_status ? R"("metadata":{"annotations":{"kwok.x-k8s.io/status":"custom"}},)" : "";
  return kubectl(
      c,
      "-n " + ns + " create -o json -f - <<'EOF'\n" +
          R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":"linux"},"spec":{)"
          R"("scopeURL":")" +
          scope_url + R"(","credentialsSecretName":"github","intake":")" + opts.intake +
          R"(","runnerLabels":["linux"],)" + opts.extra_spec + R"("minRunners":)" +
          std::to_string(min_runners) + R"(,"maxRunners":)" + std::to_string(max_runners) +
          R"(,"template":{)" + template_metadata +
          R"("spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0"}]}}}})"
          "\nEOF");
}

// The runner container of `pod` exits with `code`, as a runner does after its
// one job (kwok leaves pods with the custom-status annotation alone, so the
// test drives their status).
inline void runner_pod_exits(const cluster_info& c, const std::string& ns, const std::string& pod, int code) {
  kubectl(c, "-n " + ns + " annotate pod/" + pod + " kwok.x-k8s.io/status=custom >/dev/null");
  kubectl(
      c,
      "-n " + ns + " patch pod/" + pod + " --subresource=status --type=merge -p '" +
          R"({"status":{"phase":")" + (code == 0 ? "Succeeded" : "Failed") +
          R"(","conditions":[{"type":"Ready","status":"False"}],"containerStatuses":[{"name":"runner","image":"r","imageID":"","ready":false,"restartCount":0,"state":{"terminated":{"exitCode":)" +
          std::to_string(code) + R"(}}}]}})" + "' >/dev/null");
}

// What the actor tests share: the cluster with the CRDs, a fresh namespace,
// the GitHub simulator with organisation "acme", a Kubernetes request pool.
class actor_test_base : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { install_crds(cluster()); }

  explicit actor_test_base(const std::string& ns_prefix) : c_(cluster()), ns_(make_namespace(c_, ns_prefix)) {
    auto cfg = kube::load_kubeconfig(c_.kubeconfig);
    if (!cfg) ADD_FAILURE() << cfg.error();
    kube_cfg_ = *cfg;
    auto sim = sim::simulator::start({});
    if (!sim) ADD_FAILURE() << sim.error();
    sim_ = std::move(*sim);
    sim_->add_organization("acme");
    kube_ = kube::spawn_request_pool(sys_, kube_cfg_, {}, 2);
  }

  ~actor_test_base() override {
    for (auto& i : informers_) caf::anon_send_exit(i, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(kube_, caf::exit_reason::user_shutdown);
    kubectl(c_, "delete namespace " + ns_ + " --wait=false >/dev/null");
  }

  // `kubectl get ARGS` in the test namespace; what it printed, "" on failure.
  std::string get(const std::string& args) {
    return kubectl(c_, "-n " + ns_ + " get " + args + " 2>/dev/null || true");
  }

  // Polls get(args) until it prints `want`; on timeout fails the test with
  // what it last saw and diagnostics().
  bool eventually(const std::string& args, const std::string& want,
                  std::chrono::seconds within = std::chrono::seconds(60)) {
    return bool(wait_for_value([&] { return get(args); }, want, within, "get " + args,
                               [&] { return diagnostics(); }));
  }

  virtual std::string diagnostics() { return get("runners,pods,secrets -o wide") + get("runners -o yaml"); }

  const cluster_info& c_;
  std::string ns_;
  kube::config kube_cfg_;
  std::unique_ptr<sim::simulator> sim_;
  caf::actor_system_config sys_cfg_;
  caf::actor_system sys_{sys_cfg_};
  caf::actor kube_;
  std::vector<caf::actor> informers_;
};

}  // namespace octorun::test
