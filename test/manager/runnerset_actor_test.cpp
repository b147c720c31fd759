// The RunnerSet actor with its Runner actors, on the real apiserver (kwok
// runs the pods) against the GitHub simulator as a GHES host: scaling from
// job demand up and back to zero, and scale-down that never takes a busy runner.
#include "actors/runnerset/runnerset_actor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "actors/kinds.hpp"
#include "adapters/kube/config.hpp"
#include "adapters/kube/informer.hpp"
#include "messages/jobs.hpp"
#include "test/manager/wiring.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;

class RunnerSetActor : public test::actor_test_base {
 protected:
  RunnerSetActor() : actor_test_base("rset") {}

  ~RunnerSetActor() override {
    if (set_) caf::anon_send_exit(set_, caf::exit_reason::user_shutdown);
  }

  void start(int min_runners, int max_runners) {
    test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", min_runners, max_runners);
    runnerset_actor_config cfg;
    cfg.ns = ns_;
    cfg.name = "linux";
    cfg.kube = kube_;
    cfg.busy_recheck = 200ms;
    cfg.runner_defaults.busy_recheck = 200ms;
    cfg.runner_defaults.retry_initial = 100ms;
    set_ = caf::actor_cast<caf::actor>(spawn_runnerset(sys_, cfg));
    const std::string mine = "octorun.io/runnerset=linux";
    informers_ = test::forward_informers(sys_, kube_cfg_, ns_,
                                         {{kinds::runnersets(), "", "metadata.name=linux"},
                                          {kinds::runners(), mine, ""},
                                          {kinds::pods(), mine, ""},
                                          {kinds::secrets(), mine, ""}},
                                         set_);
  }

  std::vector<std::string> runner_names() {
    std::vector<std::string> out;
    std::istringstream in(get("runners -o jsonpath='{.items[*].metadata.name}'"));
    for (std::string n; in >> n;) out.push_back(n);
    return out;
  }

  messages::job_info job(std::int64_t id) {
    messages::job_info j;
    j.job_id = id;
    j.repository = "acme/app";
    j.labels = {"self-hosted", "linux"};
    return j;
  }
  void available(std::int64_t id) { caf::anon_send(set_, messages::job_available{job(id)}); }
  void started(std::int64_t id, const std::string& runner) {
    caf::anon_send(set_, messages::job_started{job(id), runner, 0});
  }
  void completed(std::int64_t id, const std::string& runner) {
    caf::anon_send(set_, messages::job_completed{job(id), runner, 0, "succeeded"});
  }

  caf::actor set_;
};

TEST_F(RunnerSetActor, ScalesFromZeroToDemandAndBackToZero) {
  start(0, 5);
  EXPECT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas}'", "0"));
  for (int id = 1; id <= 3; ++id) available(id);
  ASSERT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas} {.status.idleRunners}'", "3 3"));
  auto names = runner_names();
  ASSERT_EQ(names.size(), 3u);
  for (int i = 0; i < 3; ++i) started(i + 1, names[i]);
  EXPECT_TRUE(
      eventually("runnerset linux -o jsonpath='{.status.runningRunners} {.status.assignedJobs}'", "3 3"));
  EXPECT_TRUE(eventually("runners -o jsonpath='{.items[*].status.phase}'", "Running Running Running"));

  // Each ephemeral runner is done once its job completes (its pod is about
  // to exit): finished runners are deleted through their finalizers and
  // none replace them.
  for (int i = 0; i < 3; ++i) completed(i + 1, names[i]);
  EXPECT_TRUE(eventually("runners -o name", ""));
  EXPECT_TRUE(eventually("pods -o name", ""));
  EXPECT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas} {.status.assignedJobs}'", "0 0"));
  EXPECT_EQ(sim_->calls("rest.generate_jitconfig"), 3);
}

TEST_F(RunnerSetActor, ScaleDownTakesIdleRunnersAndNeverABusyOne) {
  start(0, 5);
  available(1);
  available(2);
  ASSERT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas} {.status.idleRunners}'", "2 2"));
  auto names = runner_names();
  ASSERT_EQ(names.size(), 2u);
  const auto busy = names[0], idle = names[1];
  started(1, busy);
  ASSERT_TRUE(sim_->set_runner_busy(busy, true));
  ASSERT_TRUE(eventually("runner " + busy + " -o jsonpath='{.status.phase}'", "Running"));

  // Job 2 is cancelled before a runner takes it: demand falls to job 1, so
  // the idle runner goes. Then an operator scales the set to zero through
  // the scale subresource (as an HPA would) while job 1 still runs.
  completed(2, "");
  EXPECT_TRUE(eventually("runners -o jsonpath='{.items[*].metadata.name}'", busy));
  test::kubectl(c_, "-n " + ns_ + " scale runnerset/linux --replicas=0 >/dev/null");
  EXPECT_TRUE(
      eventually("runnerset linux -o jsonpath='{.status.desiredReplicas} {.status.runningRunners}'", "0 1"));
  // The idle runner was removed from GitHub once (its finalizer knows it is
  // gone); the busy one was never a candidate and is still registered.
  EXPECT_EQ(sim_->calls("rest.delete_runner"), 1);
  EXPECT_NE(sim_->state_json().find("\"" + busy + "\""), std::string::npos);
  EXPECT_EQ(sim_->state_json().find("\"" + idle + "\""), std::string::npos);
  EXPECT_EQ(get("pod/" + busy + " -o jsonpath='{.status.phase}{.metadata.deletionTimestamp}'"), "Running");
  EXPECT_EQ(get("runner/" + busy + " -o jsonpath='{.metadata.deletionTimestamp}'"), "");

  // The job ends: the runner is finished, cleaned up, and nothing replaces it.
  ASSERT_TRUE(sim_->set_runner_busy(busy, false));
  completed(1, busy);
  EXPECT_TRUE(eventually("runners -o name", ""));
  EXPECT_TRUE(eventually("pods -o name", ""));
}

TEST_F(RunnerSetActor, DeletingTheSetRemovesEveryRunnerHereAndOnGitHub) {
  start(2, 5);
  ASSERT_TRUE(eventually("runnerset linux -o jsonpath='{.status.replicas} {.status.idleRunners}'", "2 2"));
  EXPECT_EQ(get("runnerset linux -o jsonpath='{.metadata.finalizers[0]}'"), "octorun.io/runnerset");
  EXPECT_NE(sim_->state_json().find("\"ephemeral\":true"), std::string::npos);

  test::kubectl(c_, "-n " + ns_ + " delete runnerset linux --wait=false >/dev/null");
  EXPECT_TRUE(eventually("runnersets -o name", ""));
  EXPECT_TRUE(eventually("runners -o name", ""));
  EXPECT_TRUE(eventually("pods -o name", ""));
  EXPECT_TRUE(eventually("secrets -l octorun.io/runner -o name", ""));
  EXPECT_EQ(sim_->state_json().find("\"ephemeral\":true"), std::string::npos) << "a GitHub runner leaked";
}

}  // namespace
}  // namespace octorun::runnerset
