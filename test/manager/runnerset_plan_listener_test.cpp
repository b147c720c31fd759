// The RunnerSet's plan() under the Listener intake (runnerset_plan_test.cpp
// says how the plan tests are laid out): a scale set registered before its
// variant scales, its listener and session, the statistics as demand, and
// jobs whose runner finished before their completion came.
#include <gtest/gtest.h>

#include "actors/runnerset/plan.hpp"
#include "actors/runnerset/set_status.hpp"
#include "test/manager/runnerset_plan_fixtures.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;
using namespace plan_fixtures;
using plan_fixtures::demand;  // not the struct runnerset::demand (scaling.hpp)

TEST(RunnerSetPlan, AScaleSetIsRegisteredBeforeItsVariantScales) {
  auto o = listener_set();
  o.set->spec.min_runners = 2;
  auto p = plan(o);
  EXPECT_EQ(creates(p), 0);
  auto reg = of(p, action_kind::register_scale_set);
  ASSERT_EQ(reg.size(), 1u);
  EXPECT_EQ(reg[0].scale_set_name, "linux");
  EXPECT_EQ(reg[0].id, 1);  // the runner group
  EXPECT_EQ(reg[0].labels, (names{"linux"})) << "runs-on: <scale set name> works too";
  o.in_flight.insert({action_kind::register_scale_set, ""});
  EXPECT_FALSE(has(plan(o), action_kind::register_scale_set)) << "registered twice";
}

TEST(RunnerSetPlan, TheRunnerGroupIsLookedUpOnceBeforeRegistering) {
  auto o = listener_set();
  o.runner_group_id.reset();
  o.set->spec.variants = {model::variant_spec{"a", {}, {}, {}, {}}, model::variant_spec{"b", {}, {}, {}, {}}};
  auto p = plan(o);
  EXPECT_EQ(of(p, action_kind::resolve_runner_group).size(), 1u);
  EXPECT_FALSE(has(p, action_kind::register_scale_set));
  o.in_flight.insert({action_kind::resolve_runner_group, ""});
  EXPECT_FALSE(has(plan(o), action_kind::resolve_runner_group));
}

TEST(RunnerSetPlan, ARegisteredScaleSetScalesOnlyOnceItsSessionReported) {
  auto o = listener_set();
  registered(o, 3);
  o.scale_sets[""].reported = false;
  add_runner(o, "linux-a", model::runner_phase::pending, true);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 0) << "demand unknown is not zero";
  EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty()) << "removed on a guess after a restart";
  o.scale_sets[""].reported = true;
  EXPECT_EQ(creates(plan(o)), 2);
}

TEST(RunnerSetPlan, ARegisteredScaleSetGetsItsListener) {
  auto o = listener_set();
  registered(o, 0);
  o.scale_sets[""].listening = false;
  EXPECT_EQ(subjects(plan(o), action_kind::start_listener), (names{""}));
  o.scale_sets[""].listening = true;
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::start_listener));
  EXPECT_FALSE(has(p, action_kind::register_scale_set)) << "labels unchanged: left alone";
}

// The status keeps the session last opened on the scale set, so a successor
// (after a crash) can delete it: a restarted manager keeps the recorded id
// until its own listener opens one, then records that.
TEST(RunnerSetPlan, TheStatusRecordsTheSessionLastOpened) {
  auto o = listener_set();
  o.set->status.scale_set_id = 7;
  o.set->status.session_id = "before-the-crash";
  auto status = of(plan(o), action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("sessionId":"before-the-crash")"), std::string::npos) << status[0].text;
  EXPECT_EQ(session_id(o, ""), "before-the-crash") << "what the next listener may take over";
  registered(o, 0);
  o.scale_sets[""].session_id = "opened-now";
  status = of(plan(o), action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("sessionId":"opened-now")"), std::string::npos) << status[0].text;
  EXPECT_EQ(session_id(o, ""), "opened-now");
}

TEST(RunnerSetPlan, ChangedLabelsUpdateTheScaleSet) {
  auto o = listener_set();
  registered(o, 0);
  o.set->spec.runner_labels = {"gpu"};
  auto reg = of(plan(o), action_kind::register_scale_set);
  ASSERT_EQ(reg.size(), 1u);
  EXPECT_EQ(reg[0].labels, (names{"gpu", "linux"}));
}

TEST(RunnerSetPlan, AScaleSetDeletedOnGitHubIsRegisteredAgain) {
  auto o = listener_set();
  registered(o, 2);
  EXPECT_FALSE(has(plan(o), action_kind::register_scale_set));
  o.scale_sets[""] = {};  // a JIT request found it gone
  auto p = plan(o);
  EXPECT_TRUE(has(p, action_kind::register_scale_set));
  EXPECT_EQ(creates(p), 0);
}

TEST(RunnerSetPlan, AFailedRegistrationBacksOffAndWakesAtRetryAt) {
  auto o = listener_set();
  o.scale_sets[""].failures = 1;
  o.scale_sets[""].retry_at = t0 + 2s;
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::register_scale_set));
  auto wakes = of(p, action_kind::wake);
  ASSERT_EQ(wakes.size(), 1u);
  EXPECT_EQ(wakes[0].subject, retry_wake(""));
  EXPECT_EQ(wakes[0].at, t0 + 2s);
  o.now = t0 + 2s;
  EXPECT_TRUE(has(plan(o), action_kind::register_scale_set));
}

TEST(RunnerSetPlan, StatisticsAreTheListenersDemand) {
  auto o = listener_set();
  registered(o, 2);
  demand(o, 5);  // webhook jobs do not count under the Listener intake
  EXPECT_EQ(creates(plan(o)), 2);
}

// A runner exited (Succeeded) before GitHub's completion of its job came:
// GitHub still counts the job, which is over.
TEST(RunnerSetPlan, AJobWhoseRunnerFinishedBeforeItsCompletionCameIsNoDemandDuringTheGrace) {
  for (bool listener : {true, false}) {
    SCOPED_TRACE(listener ? "Listener" : "Webhook");
    auto o = listener ? listener_set() : ready_set();
    demand(o, 2);  // 1000 (its runner finished) and 1001 (queued)
    if (listener) {
      registered(o, 2);
      o.scale_sets[""].running_jobs = 1;  // 1000's, as GitHub still counts it
    }
    add_runner(o, "linux-done", model::runner_phase::succeeded, false).view.has_job = true;
    o.unheard_completions[1000] = {"", t0 - 1s};
    auto p = plan(o);
    EXPECT_EQ(creates(p), 1) << "a runner for the queued job, none for the job that is over";
    auto wakes = of(p, action_kind::wake);
    ASSERT_EQ(wakes.size(), 1u);
    EXPECT_EQ(wakes[0].subject, "completion-grace ");
    EXPECT_EQ(wakes[0].at, t0 - 1s + unheard_completion_grace);
    // A completion that never comes holds no queued job back after the grace.
    o.now = t0 - 1s + unheard_completion_grace;
    p = plan(o);
    EXPECT_EQ(creates(p), 2);
    EXPECT_FALSE(has(p, action_kind::wake));
    // The completion came: the job leaves active_jobs (its mark stays until the next resync).
    o.now = t0;
    o.active_jobs.erase(1000);
    if (listener) {
      o.scale_sets[""].assigned_jobs = 1;
      o.scale_sets[""].running_jobs = 0;
    }
    EXPECT_EQ(creates(plan(o)), 1) << "the mark of a job no longer counted takes nothing off";
  }
}

// Statistics newer than the job messages: they stopped counting the job
// before its JobCompleted came. It is not taken off twice.
TEST(RunnerSetPlan, AFinishedJobTheStatisticsNoLongerCountIsNotTakenOffAgain) {
  auto o = listener_set();
  demand(o, 1);      // 1000, heard started; its runner finished
  registered(o, 1);  // one queued job; 1000 no longer counted
  add_runner(o, "linux-done", model::runner_phase::succeeded, false).view.has_job = true;
  o.unheard_completions[1000] = {"", t0};
  EXPECT_EQ(creates(plan(o)), 1) << "no running job left to take off";
  o.scale_sets[""].running_jobs = 1;  // a job running on a runner of the set: not 1000
  add_runner(o, "linux-busy", model::runner_phase::running, true);
  o.scale_sets[""].assigned_jobs = 2;
  EXPECT_EQ(creates(plan(o)), 1) << "the busy runner runs the one running job";
}

TEST(RunnerSetPlan, TheStatusKeepsTheRecordedScaleSetIdUntilRegistered) {
  auto o = listener_set();
  o.set->status.scale_set_id = 42;
  auto status = of(plan(o), action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("scaleSetId":42)"), std::string::npos) << status[0].text;
  registered(o, 0);
  status = of(plan(o), action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("scaleSetId":7)"), std::string::npos) << status[0].text;
}

}  // namespace
}  // namespace octorun::runnerset
