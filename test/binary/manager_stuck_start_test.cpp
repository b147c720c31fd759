// The octorun binary against the GitHub simulator with a runner that never
// comes online (its pod stays Pending: kwok leaves the set's pods to the
// test, which makes every pod but the first Running and Ready): past the
// variant's start-up deadline it is removed and replaced, the job runs on
// the replacement before GitHub would reassign it, maxRunners is never
// exceeded (in a set full with the laggard the replacement waits for it to
// go; with room it goes at once, and is never taken for an excess runner
// while the laggard goes), and the replacement is counted and told in an
// Event.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <string>

#include "common/rfc3339.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/binary/binary_test_base.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"
#include "test/support/wiring.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

class ManagerStuckStart : public test::binary_test_base {
 protected:
  ManagerStuckStart() : binary_test_base("mgrss", {}) {}

  // The manager, its log at debug (kept when the test fails): the URL of its
  // webhook intake once it leads.
  std::string start_manager() {
    auto args = test::octorun_args(c_.kubeconfig, ns_, "m");
    args.push_back("--log-level=debug");
    manager_ = std::make_unique<test::octorun_process>(OCTORUN_BINARY, args, "unused",
                                                       "/tmp/octorun-manager-" + ns_ + ".log");
    return manager_->wait_leading(60s);
  }

  std::string get(const std::string& what, const std::string& jsonpath) {
    return test::kubectl(c_, "-n " + ns_ + " get " + what + " -o jsonpath='" + jsonpath + "' 2>/dev/null");
  }
  std::string context() {
    return test::kubectl(c_, "-n " + ns_ + " get runners,pods -o wide") +
           (manager_ ? manager_->log_tail() : "");
  }

  // The RunnerSet "linux" (Listener intake, a start-up deadline of 10 s)
  // whose pods kwok leaves alone.
  void create_set(int max_runners) {
    test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", 0, max_runners,
                           {.intake = "Listener",
                            .extra_spec = R"("startupTimeoutSeconds":10,)",
                            .test_plays_pod_status = true});
    ASSERT_TRUE(sim_->wait_until([](const sim::simulator& s) { return s.session_open("linux"); }, 60s))
        << context();
  }

  // What kwok would do for the pod: scheduled, its runner container
  // started, Ready (the watch then brings its runner online on GitHub).
  void pod_runs(const std::string& pod) {
    const auto now = format_rfc3339(std::time(nullptr));
    test::kubectl(c_,
                  "-n " + ns_ + " patch pod/" + pod + " --subresource=status --type=merge -p '" +
                      R"({"status":{"phase":"Running","conditions":[)"
                      R"({"type":"PodScheduled","status":"True","lastTransitionTime":")" +
                      now + R"("},{"type":"Ready","status":"True","lastTransitionTime":")" + now +
                      R"("}],"containerStatuses":[{"name":"runner","image":"r","imageID":"","ready":true,)"
                      R"("restartCount":0,"started":true,"state":{"running":{"startedAt":")" +
                      now + R"("}}}]}})" + "' >/dev/null");
  }

  // The name of the `n`th runner pod the watch saw (1-based), once it has.
  std::string nth_pod(std::size_t n, std::chrono::milliseconds within) {
    std::string name;
    watch_->wait(
        [&](const test::namespace_watch& w) {
          const auto pods = w.pod_created();
          if (pods.size() < n) return false;
          // The first sightings in order of time.
          std::vector<std::pair<test::namespace_watch::clock_type::time_point, std::string>> by_time;
          for (const auto& [runner, at] : pods) by_time.emplace_back(at, runner);
          std::sort(by_time.begin(), by_time.end());
          name = by_time[n - 1].second;
          return true;
        },
        within);
    return name;
  }
};

TEST_F(ManagerStuckStart, ARunnerThatNeverComesOnlineIsReplacedWithinMaxRunners) {
  ASSERT_FALSE(start_manager().empty()) << context();
  create_set(1);
  const auto job = test::queue_jobs(*sim_, 1, 400ms);

  const auto laggard = nth_pod(1, 60s);
  ASSERT_FALSE(laggard.empty()) << context();
  // Its pod stays Pending: past 10 s it is removed (the set is full with it,
  // so its replacement waits until it is gone).
  EXPECT_TRUE(watch_->wait(
      [&](const test::namespace_watch& w) { return w.runner_deleted().count(laggard) > 0; }, 60s))
      << "the laggard " << laggard << " is removed\n"
      << context();
  const auto replacement = nth_pod(2, 60s);
  ASSERT_FALSE(replacement.empty()) << context();
  EXPECT_NE(replacement, laggard);
  pod_runs(replacement);

  EXPECT_TRUE(test::all_completed(*sim_, job, 60s)) << sim_->state_json() << context();
  EXPECT_EQ(sim_->job_requeues(job[0]), 0) << "it ran before GitHub took its assignment back";
  EXPECT_LE(watch_->most_not_terminal(), 1u) << "maxRunners, as the watch saw the Runners";
  EXPECT_EQ(watch_->runners_seen(), 2u) << "the laggard and its one replacement";

  const auto metrics = manager_->wait_metrics(10s);
  const std::vector<std::string> of_set = {"namespace=\"" + ns_ + "\"", "runnerset=\"linux\"",
                                           "variant=\"\""};
  EXPECT_EQ(test::scrape_metric(metrics, "octorun_stuck_starts_replaced_total", of_set), "1");
  auto deleted = of_set;
  deleted.push_back("reason=\"stuck_start\"");
  EXPECT_EQ(test::scrape_metric(metrics, "octorun_runners_deleted_total", deleted), "1");
  test::wait_for_value(
      [&] {
        return get(
            "events.events.k8s.io --field-selector regarding.kind=RunnerSet,regarding.name=linux,"
            "reason=StuckStartReplaced",
            "{range .items[*]}{.type}|{.note}{end}");
      },
      "Warning|Runner " + laggard +
          " did not come online within 10 s (spec.startupTimeoutSeconds): it is removed unless it took a "
          "job, "
          "and replaced within maxRunners (at once when there is room, else once it is gone)",
      30s, "the set's StuckStartReplaced Event");
}

// With room, the replacement goes at once, beside the laggard on its way out.
TEST_F(ManagerStuckStart, WithRoomTheReplacementGoesAtOnce) {
  ASSERT_FALSE(start_manager().empty()) << context();
  create_set(2);
  const auto job = test::queue_jobs(*sim_, 1, 400ms);
  const auto laggard = nth_pod(1, 60s);
  ASSERT_FALSE(laggard.empty()) << context();
  const auto replacement = nth_pod(2, 60s);
  ASSERT_FALSE(replacement.empty()) << context();
  pod_runs(replacement);
  EXPECT_TRUE(test::all_completed(*sim_, job, 60s)) << sim_->state_json() << context();
  EXPECT_TRUE(watch_->wait(
      [&](const test::namespace_watch& w) { return w.runner_deleted().count(laggard) > 0; }, 60s))
      << "the laggard " << laggard << " is removed\n"
      << sim_->state_json() << context();
  EXPECT_LE(watch_->most_not_terminal(), 2u) << "maxRunners, as the watch saw the Runners";
  EXPECT_EQ(watch_->runners_seen(), 2u) << "the laggard and its one replacement";
  EXPECT_EQ(sim_->job_requeues(job[0]), 0);
}

}  // namespace
}  // namespace octorun
