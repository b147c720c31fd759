// The controller's Pod informer on the real apiserver (issue 32): a Pod that
// stops qualifying (its Runner ownerReference removed, as `kubectl delete
// runner --cascade=orphan` has the garbage collector do, or relabelled for a
// set that does not exist) leaves the cache and its subscribers hear it is
// gone, as a relist would tell them; it is not kept stale until deleted.
#include <gtest/gtest.h>

#include <algorithm>
#include <caf/all.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "actors/controller/owned_routing.hpp"
#include "actors/watched.hpp"
#include "adapters/kube/config.hpp"
#include "model/naming.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

class PodInformerOnTheApiserver : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::install_crds(test::cluster()); }

  PodInformerOnTheApiserver() : c_(test::cluster()), ns_(test::make_namespace(c_, "pod-intake")) {
    auto cfg = kube::load_kubeconfig(c_.kubeconfig);
    if (!cfg) ADD_FAILURE() << cfg.error();
    if (cfg) cfg_ = *cfg;
    known_->insert(ns_ + "/linux");
  }
  ~PodInformerOnTheApiserver() override {
    if (informer_) caf::anon_send_exit(informer_, caf::exit_reason::user_shutdown);
    test::kubectl(c_, "delete namespace " + ns_ + " --wait=false >/dev/null");
  }

  std::string kubectl(const std::string& args) { return test::kubectl(c_, "-n " + ns_ + " " + args); }
  void create(const std::string& json) { kubectl("create -f - >/dev/null <<'EOF'\n" + json + "\nEOF"); }

  // A Runner for real (the garbage collector would delete a Pod whose
  // owner does not exist); returns its uid.
  std::string make_runner(const std::string& name) {
    create(R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":")" + name +
           R"(","labels":{"octorun.io/runnerset":"linux"}},"spec":{"scopeURL":"https://github.com/acme",)"
           R"("template":{"spec":{"containers":[{"name":"runner","image":"runner"}]}}}})");
    return kubectl("get runner " + name + " -o jsonpath='{.metadata.uid}'");
  }
  void make_pod(const std::string& name, const std::string& runner_uid) {
    create(
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
        R"(","labels":{"octorun.io/runnerset":"linux"},"ownerReferences":[{"apiVersion":"octorun.io/v1alpha1",)"
        R"("kind":"Runner","name":")" +
        name + R"(","uid":")" + runner_uid +
        R"(","controller":true}]},"spec":{"containers":[{"name":"runner","image":"runner"}]}})");
  }

  // The controller's informer and filter (actors/controller/controller.cpp
  // watch_children, keep_pod: a Runner's Pod of a set it knows).
  void watch() {
    kube::informer_options io;
    io.ns = ns_;
    io.label_selector = model::label_runnerset;
    informer_ = watched::watch_pods(sys_, cfg_, {}, io, [known = known_](const model::runner_pod& pod) {
      return controller::intake_of_pod(pod.metadata, *known) == controller::pod_intake::keep;
    });
    self_->send(informer_, kube::subscribe_atom::value, caf::actor_cast<caf::actor>(self_));
  }

  // Receives the informer's messages until `done()` or the deadline.
  bool run_until(const std::function<bool()>& done, std::chrono::seconds within = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (!done()) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= 0s) return false;
      bool timed_out = false;
      self_->receive(
          [&](watched::pod_event& e) {
            const auto key = ns_ + "/" + e.obj->metadata.name;
            if (e.type == kube::event_type::deleted) {
              EXPECT_EQ(held_.erase(key), 1u) << "DELETED of unknown " << key;
              deleted_.push_back(e.obj->metadata.name);
            } else {
              held_[key] = e.obj->metadata.resource_version;
            }
          },
          [&](kube::informer_synced&) { synced_ = true; },
          caf::after(std::chrono::duration_cast<std::chrono::milliseconds>(left)) >>
              [&] { timed_out = true; });
      if (timed_out) return done();
    }
    return true;
  }

  std::vector<std::string> cached() {
    std::vector<std::string> names;
    self_->request(informer_, 10s, kube::snapshot_atom::value)
        .receive(
            [&](kube::snapshot_of<watched::pod_ptr>& s) {
              for (const auto& p : s.items) names.push_back(p->metadata.name);
            },
            [&](caf::error& e) { ADD_FAILURE() << sys_.render(e); });
    std::sort(names.begin(), names.end());
    return names;
  }

  const test::cluster_info& c_;
  std::string ns_;
  kube::config cfg_;
  std::shared_ptr<controller::known_sets> known_ = std::make_shared<controller::known_sets>();
  caf::actor_system_config sys_cfg_;
  caf::actor_system sys_{sys_cfg_};
  caf::scoped_actor self_{sys_};
  caf::actor informer_;
  std::map<std::string, std::string> held_;  // key -> resourceVersion, from the events
  std::vector<std::string> deleted_;
  bool synced_ = false;
};

TEST_F(PodInformerOnTheApiserver, APodThatStopsQualifyingLeavesTheCacheAndIsDeletedForSubscribers) {
  make_pod("linux-orphan", make_runner("linux-orphan"));
  make_pod("linux-relabel", make_runner("linux-relabel"));
  watch();
  ASSERT_TRUE(run_until([&] { return synced_ && held_.size() == 2; })) << held_.size() << " delivered";
  EXPECT_EQ(cached(), (std::vector<std::string>{"linux-orphan", "linux-relabel"}));

  // Its Runner's ownerReference removed: no Runner's Pod any more.
  kubectl(
      R"(patch pod linux-orphan --type=json -p '[{"op":"remove","path":"/metadata/ownerReferences"}]' >/dev/null)");
  ASSERT_TRUE(run_until([&] { return deleted_.size() == 1; })) << "the orphaned Pod stayed cached";
  EXPECT_EQ(deleted_, std::vector<std::string>{"linux-orphan"});
  EXPECT_EQ(cached(), std::vector<std::string>{"linux-relabel"});
  EXPECT_NE(kubectl("get pod linux-orphan -o name").find("pod/linux-orphan"), std::string::npos)
      << "still there: the DELETED came from the informer, not a deletion";

  // Relabelled for a set that does not exist.
  kubectl("label pod linux-relabel --overwrite octorun.io/runnerset=ghost >/dev/null");
  ASSERT_TRUE(run_until([&] { return deleted_.size() == 2; })) << "the relabelled Pod stayed cached";
  EXPECT_EQ(deleted_.back(), "linux-relabel");
  EXPECT_TRUE(cached().empty());
  EXPECT_TRUE(held_.empty());

  // Labelled back for its set: a Runner's Pod of it again, ADDED anew.
  kubectl("label pod linux-relabel --overwrite octorun.io/runnerset=linux >/dev/null");
  ASSERT_TRUE(run_until([&] { return held_.count(ns_ + "/linux-relabel") == 1; }));
  EXPECT_EQ(cached(), std::vector<std::string>{"linux-relabel"});
}

}  // namespace
}  // namespace octorun
