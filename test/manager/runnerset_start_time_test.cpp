// A start-time target on the RunnerSet actor, on the real apiserver against
// the GitHub simulator: runners that take a minute to come online make the
// set keep warm runners beside a busy one, and once no job came for the
// window (45 s here, 10 minutes in the manager) they go, the busy runner
// untouched. The test plays the runner pods' status itself (kwok leaves
// pods annotated kwok.x-k8s.io/status=custom alone), so a pod is Ready a
// minute after its Runner was created, whatever the clock says.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "actors/runnerset/runnerset_actor.hpp"
#include "common/rfc3339.hpp"
#include "messages/jobs.hpp"
#include "test/support/poll.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wiring.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;

class RunnerSetStartTime : public test::actor_test_base {
 protected:
  RunnerSetStartTime() : actor_test_base("rsst") {}
  ~RunnerSetStartTime() override {
    if (set_) caf::anon_send_exit(set_, caf::exit_reason::user_shutdown);
  }

  void start(int min_runners, int max_runners, int target_seconds, std::chrono::milliseconds window) {
    test::create_runnerset(
        c_, ns_, sim_->ghes_url() + "/acme", min_runners, max_runners,
        {.extra_spec = R"("startTimeTarget":{"p95Seconds":)" + std::to_string(target_seconds) + "},",
         .test_plays_pod_status = true});
    runnerset_actor_config cfg;
    cfg.ns = ns_;
    cfg.name = "linux";
    cfg.kube = kube_;
    cfg.scopes.http_hosts = {"127.0.0.1"};  // the GitHub simulator
    cfg.busy_recheck = 200ms;
    cfg.runner_defaults.busy_recheck = 200ms;
    cfg.runner_defaults.retry_initial = 100ms;
    cfg.start_time_window = window;
    set_ = caf::actor_cast<caf::actor>(spawn_runnerset(sys_, cfg));
    informers_ = test::forward_set_informers(sys_, kube_cfg_, ns_, set_);
  }

  messages::job_info job(std::int64_t id) {
    messages::job_info j;
    j.job_id = id;
    j.repository = "acme/app";
    j.labels = {"self-hosted", "linux"};
    return j;
  }

  // The runner's pod turns Ready `after` its Runner's creation.
  void online_after(const std::string& runner, std::chrono::seconds after) {
    const auto created =
        parse_rfc3339(get("runner " + runner + " -o jsonpath='{.metadata.creationTimestamp}'"));
    ASSERT_TRUE(created) << "Runner " << runner;
    const auto ready = format_rfc3339(*created + after.count());
    test::kubectl(c_,
                  "-n " + ns_ + " patch pod/" + runner + " --subresource=status --type=merge -p '" +
                      R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True",)"
                      R"("lastTransitionTime":")" +
                      ready +
                      R"("}],"containerStatuses":[{"name":"runner","image":"r","imageID":"","ready":true,)"
                      R"("restartCount":0,"state":{"running":{"startedAt":")" +
                      ready + R"("}}}]}}' >/dev/null)");
  }

  std::string diagnostics() override {
    return get("runnerset linux -o jsonpath='{.status}'") + "\n" + actor_test_base::diagnostics();
  }

  static std::string condition() {
    return R"(runnerset linux -o jsonpath='{.status.conditions[?(@.type=="StartTimeTargetMet")].reason}')";
  }

  caf::actor set_;
};

TEST_F(RunnerSetStartTime, SlowStartUpsKeepWarmRunnersUntilDemandStops) {
  start(0, 6, 5, 45s);
  caf::anon_send(set_, messages::job_available{job(1)});
  std::string first;
  ASSERT_TRUE(test::wait_for(
      [&] { return !(first = get("runners -o jsonpath='{.items[*].metadata.name}'")).empty(); }, 60s,
      "the job's runner", [&] { return diagnostics(); }));
  // A job came, no runner came online yet: nothing to size from.
  EXPECT_TRUE(eventually(condition(), "StartUpUnobserved"));
  ASSERT_TRUE(eventually("pod " + first + " -o jsonpath='{.metadata.name}'", first));
  online_after(first, 60s);
  caf::anon_send(set_, messages::job_started{job(1), first, 0});
  ASSERT_TRUE(eventually("runner " + first + " -o jsonpath='{.status.phase}'", "Running"));

  // Runners take 60 s, the target is 5 s, one job in 45 s: Poisson(55 / 45)
  // at 95 % is 3, plus one: 4 warm beside the busy one, within maxRunners 6.
  EXPECT_TRUE(
      eventually("runnerset linux -o jsonpath='{.status.startTime.warmRunners} {.status.desiredReplicas} "
                 "{.status.replicas}'",
                 "4 5 5"));
  EXPECT_EQ(get(R"(runnerset linux -o jsonpath='{.status.startTime.runnerStartupP95Seconds} )"
                R"({.status.startTime.recentJobs} {.status.startTime.targetP95Seconds}')"),
            "60 1 5");
  EXPECT_TRUE(eventually(condition(), "TargetMet"));

  // No job for the window: the warm runners go, the busy one stays.
  EXPECT_TRUE(
      eventually("runnerset linux -o jsonpath='{.status.startTime.warmRunners} {.status.desiredReplicas} "
                 "{.status.replicas} {.status.runningRunners}'",
                 "0 1 1 1", 120s));
  EXPECT_TRUE(eventually(condition(), "NoRecentJobs"));
  EXPECT_EQ(get("runners -o jsonpath='{.items[*].metadata.name}'"), first);
  EXPECT_EQ(get("runner " + first + " -o jsonpath='{.status.phase}'"), "Running");
}

}  // namespace
}  // namespace octorun::runnerset
