// The octorun binary with a Listener-intake RunnerSet: demand comes from the
// scale set's statistics over the message session (no webhook), runners get
// their JIT configuration from the scale set. As users run it: the real
// binary, the real control plane, the simulator as GitHub; a watch plays the
// runner process (its pod runs, so it comes online on GitHub).
#include <gtest/gtest.h>

#include <chrono>
#include <regex>

#include "test/binary/binary_harness.hpp"
#include "test/binary/binary_test_base.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wiring.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

// The simulator's long poll, short enough for a test; a killed manager's
// session lapses only after GitHub's own idle time, so a successor that
// opens one sooner took the old one over.
constexpr auto session_lapse = 120s;
sim::simulator_options listener_simulator() {
  sim::simulator_options o;
  o.long_poll = 20s;  // polls are in flight whenever the manager stops
  o.session_idle_timeout = session_lapse;
  return o;
}

class ManagerListener : public test::binary_test_base {
 protected:
  ManagerListener() : binary_test_base("mgrl", listener_simulator()) {}

  void start_manager() {
    ASSERT_FALSE(start_manager_process(OCTORUN_BINARY, "unused").empty()) << manager_->log_tail();
  }

  void create_listener_set(int max_runners) { create_linux_set("Listener", max_runners); }

  std::string open_session() {
    for (const auto& s : sim_->scale_sets())
      if (s.name == "linux") return s.session_id;
    return {};
  }
  bool session_open() { return !open_session().empty(); }

  std::string count(const std::string& what) {
    return test::kubectl(c_, "-n " + ns_ + " get " + what + " -o name | wc -l | tr -d ' \\n'");
  }

  // Nothing left: no Runner, pod or JIT Secret here, no runner on GitHub.
  void expect_nothing_left(const std::string& why) {
    EXPECT_TRUE(
        watch_->wait([](const test::namespace_watch& w) { return w.runners() == 0 && w.pods() == 0; }, 60s))
        << why << ": " << test::kubectl(c_, "-n " + ns_ + " get runners,pods") << manager_->log_tail();
    EXPECT_EQ(count("secrets -l octorun.io/runner"), "0") << why;
    EXPECT_TRUE(sim_->wait_until(
        [](const sim::simulator& s) { return s.state_json().find("\"runners\":[]") != std::string::npos; },
        30s))
        << why << ": " << sim_->state_json();
  }
};

TEST_F(ManagerListener, ScalesFromZeroOnTheScaleSetsStatisticsAndBack) {
  start_manager();
  create_listener_set(4);
  ASSERT_TRUE(sim_->wait_until([&](const sim::simulator&) { return session_open(); }, 60s))
      << sim_->state_json() << manager_->log_tail();
  auto jobs = test::queue_jobs(*sim_, 7, 300ms);
  EXPECT_TRUE(test::all_completed(*sim_, jobs, 120s)) << sim_->state_json() << manager_->log_tail();
  // Never more than maxRunners at once, every job ran on one of ours.
  EXPECT_LE(watch_->runners_seen(), 7u + 4u);
  expect_nothing_left("after the burst");
  EXPECT_EQ(sim_->calls("rest.generate_jitconfig"), 0)
      << "listener runners get JIT configs from the scale set";
  EXPECT_GE(sim_->calls("scaleset.generate_jitconfig"), 7);
  EXPECT_EQ(sim_->calls("scaleset.create_session"), 1);
  // Every phase of the jobs' way has a sample (docs/monitoring.md), and none
  // of their timestamps was a problem: GitHub's clock is the cluster's here.
  const auto metrics = manager_->wait_metrics(10s);
  EXPECT_EQ(test::job_phases_without_sample(metrics, ns_, 30s), "") << manager_->log_tail();
  EXPECT_EQ(test::scrape_metric(metrics, "octorun_job_phase_timestamp_problems_total",
                                {"namespace=\"" + ns_ + "\""}),
            "");
  // SIGTERM cuts the long poll in flight short and deletes the session, well
  // inside a pod's termination grace period (30 s) and the poll's 20 s.
  auto stopping = std::chrono::steady_clock::now();
  EXPECT_EQ(manager_->stop(SIGTERM), 0) << manager_->log_tail();
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, 10s);
  EXPECT_FALSE(session_open()) << "a clean stop deletes the session";
}

TEST_F(ManagerListener, AKilledManagerRestartsAndConvergesWithNothingLeaked) {
  start_manager();
  create_listener_set(3);
  ASSERT_TRUE(sim_->wait_until([&](const sim::simulator&) { return session_open(); }, 60s));
  auto jobs = test::queue_jobs(*sim_, 6, 1500ms);
  // Mid-scale: runners exist and jobs run.
  ASSERT_TRUE(watch_->wait([](const test::namespace_watch& w) { return w.online() >= 1; }, 60s))
      << manager_->log_tail();
  const auto killed_session = open_session();
  // The status records the session it opened, for a successor (within the
  // set's status hold: a replica killed sooner leaves no id, and its
  // successor waits the session out).
  auto recorded = [&] {
    return test::kubectl(c_, "-n " + ns_ + " get rset linux -o jsonpath={.status.sessionId}");
  };
  ASSERT_TRUE(watch_->wait([&](const test::namespace_watch&) { return recorded() == killed_session; }, 30s))
      << recorded() << " " << killed_session << manager_->log_tail();
  manager_->stop(SIGKILL);
  // Its session is still open on GitHub; the next manager deletes it (the
  // status names it) and opens its own long before GitHub lets it lapse.
  const auto restarted = std::chrono::steady_clock::now();
  start_manager();
  ASSERT_TRUE(sim_->wait_until(
      [&](const sim::simulator&) { return session_open() && open_session() != killed_session; }, 60s))
      << sim_->state_json() << manager_->log_tail();
  EXPECT_LT(std::chrono::steady_clock::now() - restarted, session_lapse / 2);
  EXPECT_GE(sim_->calls("scaleset.delete_session"), 1) << "the killed manager's session was taken over";
  EXPECT_TRUE(test::all_completed(*sim_, jobs, 180s)) << sim_->state_json() << manager_->log_tail();
  expect_nothing_left("after the restart");
  // No duplicates: never more Runners than jobs plus the cap.
  EXPECT_LE(watch_->runners_seen(), 6u + 3u);
  EXPECT_GE(sim_->calls("scaleset.create_session"), 2);
  EXPECT_TRUE(watch_->wait(
      [&](const test::namespace_watch&) {
        return test::kubectl(c_, "-n " + ns_ + " get rset linux -o jsonpath={.status.sessionId}") ==
               open_session();
      },
      30s))
      << "the status records the new session";
}

}  // namespace
}  // namespace octorun
