// The RunnerSet actor's reconcile, rule by rule, as plan() decides it over
// an observation: no actor, no I/O, no cluster. This file: what comes before
// scaling, the status, scaling and its stabilization;
// runnerset_plan_listener_test.cpp: the Listener intake's scale sets and
// sessions; runnerset_plan_lifecycle_test.cpp: retired variants, deletion,
// per-set objects and template rollouts.
#include <gtest/gtest.h>

#include "actors/runnerset/plan.hpp"
#include "actors/runnerset/set_status.hpp"
#include "test/manager/runnerset_plan_fixtures.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;
using namespace plan_fixtures;
using plan_fixtures::demand;  // not the struct runnerset::demand (scaling.hpp)

// ---- before scaling ---------------------------------------------------------------

TEST(RunnerSetPlan, NothingBeforeTheRunnerSetIsRead) {
  set_observation o;
  EXPECT_TRUE(plan(o).actions.empty());
}

TEST(RunnerSetPlan, TheFinalizerGoesOnFirstAndAlone) {
  auto o = ready_set();
  o.has_finalizer = false;
  demand(o, 2);
  auto p = plan(o);
  ASSERT_EQ(p.actions.size(), 1u);
  EXPECT_EQ(p.actions[0].kind, action_kind::patch_finalizer);
  EXPECT_TRUE(p.actions[0].on);
  o.in_flight.insert({action_kind::patch_finalizer, ""});
  EXPECT_TRUE(plan(o).actions.empty()) << "patched twice while one is in flight";
}

TEST(RunnerSetPlan, CredentialsAreReadBeforeAnythingScales) {
  auto o = ready_set();
  o.credentials_loaded = false;
  demand(o, 2);
  auto p = plan(o);
  ASSERT_EQ(p.actions.size(), 1u);
  EXPECT_EQ(p.actions[0].kind, action_kind::read_credentials);
  o.in_flight.insert({action_kind::read_credentials, ""});
  EXPECT_TRUE(plan(o).actions.empty());
}

TEST(RunnerSetPlan, BrokenCredentialsPublishOnlyTheCondition) {
  auto o = ready_set();
  o.credentials_loaded = false;
  o.credentials_error = "key github_token: empty";
  auto status = of(plan(o), action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("status":"False","reason":"Invalid","message":"key github_token: empty")"),
            std::string::npos)
      << status[0].text;
  // Nothing scales, but the columns are not empty: the runners are counted
  // as watched, the desired count is the status's (none yet: 0).
  EXPECT_NE(
      status[0].text.find(R"("desiredReplicas":0,"replicas":0,"pendingRunners":0,"idleRunners":0,)"
                          R"("runningRunners":0,"failedRunners":0,"assignedJobs":0,"outdatedRunners":0)"),
      std::string::npos)
      << status[0].text;
}

TEST(RunnerSetPlan, BrokenCredentialsKeepTheLastDecisionAndCountTheRunners) {
  auto o = ready_set();
  o.credentials_loaded = false;
  o.credentials_error = "secrets \"gh\" not found";
  o.set->status.counts.desired_replicas = 3;
  add_runner(o, "linux-a", model::runner_phase::pending, true);
  add_runner(o, "linux-b", model::runner_phase::running, true);
  auto status = of(plan(o), action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("desiredReplicas":3,"replicas":2,"pendingRunners":0,"idleRunners":1,)"
                                R"("runningRunners":1)"),
            std::string::npos)
      << status[0].text;
  o.published_status = status[0].text;
  EXPECT_TRUE(of(plan(o), action_kind::publish_status).empty()) << "the same status is not written twice";
}

// ---- status -------------------------------------------------------------------------

TEST(RunnerSetPlan, StatusIsWrittenWhenItChanges) {
  auto o = ready_set();
  add_runner(o, "linux-a", model::runner_phase::pending, true);
  add_runner(o, "linux-b", model::runner_phase::running, true);
  demand(o, 2);
  auto status = of(plan(o), action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  const auto& text = status[0].text;
  EXPECT_NE(text.find(R"("desiredReplicas":2,"replicas":2,"pendingRunners":0,"idleRunners":1,)"
                      R"("runningRunners":1,"failedRunners":0,"assignedJobs":2)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("status":"True","reason":"Loaded")"), std::string::npos) << text;
  o.published_status = text;
  EXPECT_FALSE(has(plan(o), action_kind::publish_status)) << "the same status written again";
}

std::optional<action> status_wake_of(const set_plan& p) {
  for (const auto& a : of(p, action_kind::wake))
    if (a.subject == status_wake) return a;
  return std::nullopt;
}

// A burst changes the counts at every Runner event; after an accepted write
// the next waits for the hold, and then carries the latest status whole.
TEST(RunnerSetPlan, StatusChangesWithinTheHoldGoOutInOneWriteAfterIt) {
  auto o = ready_set();
  o.status_hold = 2s;
  add_runner(o, "linux-a", model::runner_phase::pending, true);
  demand(o, 1);
  auto first = of(plan(o), action_kind::publish_status);
  ASSERT_EQ(first.size(), 1u) << "the first write waits for nothing";
  o.published_status = first[0].text;
  o.status_written_at = o.now;
  demand(o, 1);  // a second job: new counts within the hold
  add_runner(o, "linux-b", model::runner_phase::pending, false);
  o.now += 500ms;
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::publish_status)) << "written within the hold";
  auto wake = status_wake_of(p);
  ASSERT_TRUE(wake) << "nothing plans again when the hold ends";
  EXPECT_EQ(wake->at, t0 + 2s);
  o.now = t0 + 2s;  // the wake-up
  auto status = of(plan(o), action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("desiredReplicas":2,"replicas":2,"pendingRunners":1,"idleRunners":1,)"),
            std::string::npos)
      << "the latest counts: " << status[0].text;
}

TEST(RunnerSetPlan, StatusIsNotWrittenWhileAWriteIsInFlight) {
  auto o = ready_set();
  demand(o, 1);
  o.in_flight.insert({action_kind::publish_status, ""});
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::publish_status));
  EXPECT_FALSE(status_wake_of(p)) << "its answer plans again";
  EXPECT_TRUE(p.status_after_write);
}

TEST(RunnerSetPlan, AStatusTheServerHasIsNotWrittenAfterTheHold) {
  auto o = ready_set();
  o.status_hold = 2s;
  demand(o, 1);
  auto status = of(plan(o), action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  o.published_status = status[0].text;
  o.status_written_at = o.now;
  o.now += 1s;
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::publish_status));
  EXPECT_FALSE(status_wake_of(p)) << "a wake-up for a status that did not change";
}

TEST(RunnerSetStatusWrite, DueNowLaterOrNever) {
  const auto hold = 2s;
  EXPECT_EQ(status_write_due("b", "a", false, {}, hold, t0).when, status_write::now) << "never written";
  EXPECT_EQ(status_write_due("a", "a", false, {}, hold, t0).when, status_write::never) << "the server has it";
  EXPECT_EQ(status_write_due("b", "a", true, {}, hold, t0).when, status_write::after_write)
      << "one in flight";
  EXPECT_EQ(status_write_due("a", "a", true, {}, hold, t0).when, status_write::never)
      << "in flight, unchanged";
  auto held = status_write_due("b", "a", false, t0 - 500ms, hold, t0);
  EXPECT_EQ(held.when, status_write::later);
  EXPECT_EQ(held.at, t0 + 1500ms);
  EXPECT_EQ(status_write_due("b", "a", false, t0 - 2s, hold, t0).when, status_write::now)
      << "the hold is over";
  EXPECT_EQ(status_write_due("b", "a", false, t0, 0s, t0).when, status_write::now) << "no hold";
  EXPECT_EQ(status_write_due("b", "a", false, t0 - 500ms, hold, t0, true).when, status_write::now)
      << "urgent: no hold";
  EXPECT_EQ(status_write_due("b", "a", true, t0 - 500ms, hold, t0, true).when, status_write::after_write);
}

// A successor that finds the set deleted knows its scale sets only from the
// status: a scale set registered this run is recorded without the hold. At
// 8ce8119 a manager stopped within the hold left it unrecorded, and the
// set's deletion by the next manager left it on GitHub.
TEST(RunnerSetStatusWrite, ANewScaleSetIdIsWrittenWithoutTheHold) {
  model::runnerset_status recorded;
  counts c;
  c.scale_set_id = 7;
  EXPECT_TRUE(records_new_scale_set(recorded, {{"", c}}));
  recorded.scale_set_id = 7;
  EXPECT_FALSE(records_new_scale_set(recorded, {{"", c}}));
  c.scale_set_id = 0;
  EXPECT_FALSE(records_new_scale_set({}, {{"", c}})) << "none registered";
  model::runnerset_status with_variant;
  with_variant.variants.push_back({});
  with_variant.variants.back().name = "gpu";
  with_variant.variants.back().scale_set_id = 8;
  c.scale_set_id = 8;
  EXPECT_FALSE(records_new_scale_set(with_variant, {{"gpu", c}}));
  c.scale_set_id = 9;
  EXPECT_TRUE(records_new_scale_set(with_variant, {{"gpu", c}})) << "registered anew (another id)";
}

// ---- scaling (webhook) --------------------------------------------------------------

TEST(RunnerSetPlan, WebhookDemandCreatesUpToMaxRunners) {
  auto o = ready_set();
  demand(o, 3);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 3);
  ASSERT_EQ(p.desired.size(), 1u);
  EXPECT_EQ(p.desired[0].second, 3);
  demand(o, 20);
  EXPECT_EQ(creates(plan(o)), 10);
}

TEST(RunnerSetPlan, InFlightCreatesArePlaceholdersHoldingCapacity) {
  auto o = ready_set();
  demand(o, 3);
  o.in_flight.insert({action_kind::create_runners, "linux-aaaaa"}, "");
  o.in_flight.insert({action_kind::create_runners, "linux-bbbbb"}, "");
  EXPECT_EQ(creates(plan(o)), 1);
  // A placeholder of another variant holds nothing here.
  o.in_flight.insert({action_kind::create_runners, "linux-gpu-ccccc"}, "gpu");
  EXPECT_EQ(creates(plan(o)), 1);
  // One that is watched already counts once, as the runner.
  add_runner(o, "linux-aaaaa", model::runner_phase::pending, false);
  EXPECT_EQ(creates(plan(o)), 1);
  // Placeholders are never removed: no demand, nothing to scale down.
  o.active_jobs.clear();
  o.runners.clear();
  EXPECT_TRUE(of(plan(o), action_kind::remove_idle_runner).empty());
}

// A create without a clear answer (transport error, timeout, 5xx, already
// exists) may have been stored: it holds its capacity like one in flight
// until the watch shows it or a GET, after the watch had its chance, finds none.
TEST(RunnerSetPlan, ACreateWithoutAClearAnswerHoldsCapacityUntilSeenOrFoundAbsent) {
  auto o = ready_set();
  o.set->spec.max_runners = 3;
  demand(o, 5);
  add_runner(o, "linux-aaaaa", model::runner_phase::pending, true);
  add_runner(o, "linux-bbbbb", model::runner_phase::pending, true);
  o.unconfirmed_creates["linux-ccccc"] = {"", t0};
  auto p = plan(o);
  EXPECT_EQ(creates(p), 0) << "its place is held: maxRunners is never exceeded";
  EXPECT_FALSE(has(p, action_kind::confirm_create)) << "the watch gets its chance first";
  auto wakes = of(p, action_kind::wake);
  ASSERT_EQ(wakes.size(), 1u);
  EXPECT_EQ(wakes[0].at, t0 + confirm_create_after);
  // Then a GET asks, once.
  o.now = t0 + confirm_create_after;
  EXPECT_EQ(subjects(plan(o), action_kind::confirm_create), std::vector<std::string>{"linux-ccccc"});
  o.in_flight.insert({action_kind::confirm_create, "linux-ccccc"});
  EXPECT_FALSE(has(plan(o), action_kind::confirm_create));
  EXPECT_EQ(creates(plan(o)), 0);
  // An unconfirmed create of another variant holds nothing here.
  o.in_flight.erase({action_kind::confirm_create, "linux-ccccc"});
  o.unconfirmed_creates.clear();
  o.unconfirmed_creates["linux-gpu-ddddd"] = {"gpu", t0};
  EXPECT_EQ(creates(plan(o)), 1);
  // Once watched it counts once, as the runner.
  o.unconfirmed_creates["linux-ccccc"] = {"", t0};
  add_runner(o, "linux-ccccc", model::runner_phase::pending, true);
  EXPECT_EQ(creates(plan(o)), 0);
  EXPECT_FALSE(has(plan(o), action_kind::confirm_create));
}

TEST(RunnerSetPlan, FinishedRunnersAreDeletedAndHoldNoCapacity) {
  auto o = ready_set();
  demand(o, 1);
  add_runner(o, "linux-done1", model::runner_phase::succeeded, false);
  add_runner(o, "linux-fail1", model::runner_phase::failed, false);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 1);
  EXPECT_EQ(subjects(p, action_kind::delete_runner), (names{"linux-done1", "linux-fail1"}));
  o.in_flight.insert({action_kind::delete_runner, "linux-done1"});
  EXPECT_EQ(subjects(plan(o), action_kind::delete_runner), (names{"linux-fail1"})) << "deleted twice";
}

TEST(RunnerSetPlan, IdleRunnersAreRemovedGitHubFirstByTheBestKnownId) {
  auto o = ready_set();
  add_runner(o, "linux-a", model::runner_phase::pending, true).status_runner_id = 11;
  add_runner(o, "linux-b", model::runner_phase::pending, false).jit_runner_id =
      12;                                                         // status not published yet
  add_runner(o, "linux-c", model::runner_phase::pending, false);  // never registered
  auto removals = of(plan(o), action_kind::remove_idle_runner);
  ASSERT_EQ(removals.size(), 3u);
  std::map<std::string, std::int64_t> ids;
  for (const auto& a : removals) ids[a.subject] = a.id;
  EXPECT_EQ(ids, (std::map<std::string, std::int64_t>{{"linux-a", 11}, {"linux-b", 12}, {"linux-c", 0}}));
}

// The set may give a Runner the name of an earlier one: a JIT configuration
// obtained for the earlier Runner (its answer arriving after the new one was
// seen) holds that one's runner id, and removing the new one from GitHub by
// it would remove another runner.
TEST(RunnerSetPlan, OnlyItsOwnJitRegistrationGivesAnIdleRunnerItsGitHubId) {
  auto o = ready_set();
  auto& r = add_runner(o, "linux-b", model::runner_phase::pending, false);
  r.uid = "uid-2";
  auto removal_id = [&] {
    auto removals = of(plan(o), action_kind::remove_idle_runner);
    return removals.size() == 1 ? removals[0].id : -1;
  };
  note_jit_registration(r, "uid-1", 12);  // asked for the earlier Runner
  EXPECT_EQ(r.jit_runner_id, 0);
  EXPECT_EQ(removal_id(), 0) << "not registered as far as the set knows: deleted without asking GitHub";
  note_jit_registration(r, "uid-2", 13);
  EXPECT_EQ(removal_id(), 13);
  note_jit_registration(r, "", 14);  // asked before the set saw the Runner: taken as its own
  EXPECT_EQ(removal_id(), 14);
  note_jit_registration(r, "uid-2", 0);  // no id: nothing learnt
  EXPECT_EQ(removal_id(), 14);
}

TEST(RunnerSetPlan, BusyRunnersAreNeverCandidatesAndHoldCapacity) {
  auto o = ready_set();
  add_runner(o, "linux-run", model::runner_phase::running, true);
  add_runner(o, "linux-busy", model::runner_phase::pending, true).busy_until = t0 + 1s;  // GitHub said busy
  add_runner(o, "linux-going", model::runner_phase::pending, true);
  o.in_flight.insert({action_kind::delete_runner, "linux-going"});  // its removal is in flight
  demand(o, 3);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 0) << "a busy or going runner still holds capacity";
  o.active_jobs.clear();
  p = plan(o);
  EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty());
  EXPECT_TRUE(of(p, action_kind::delete_runner).empty());
  // Once the busy window is over (by the clock), it is a candidate again.
  o.now = t0 + 2s;
  EXPECT_EQ(subjects(plan(o), action_kind::remove_idle_runner), (names{"linux-busy"}));
}

// Found while adding stuck starts: a runner whose removal was in flight
// counted as busy, so the next plan saw one idle runner too few beside it and
// removed another, then created one again once both were gone. Issue 36.
TEST(RunnerSetPlan, ARunnerBeingRemovedCountsAsGoingAwayNotTwice) {
  // The plan's own action, and the key the actor records while it runs.
  for (auto kind : {action_kind::remove_idle_runner, action_kind::delete_runner}) {
    auto o = ready_set();
    o.set->spec.min_runners = 2;
    for (auto n : {"linux-a", "linux-b", "linux-c"}) add_runner(o, n, model::runner_phase::pending, true);
    auto first = subjects(plan(o), action_kind::remove_idle_runner);
    ASSERT_EQ(first.size(), 1u) << "3 idle, 2 desired";
    o.in_flight.insert({kind, first[0]});
    auto p = plan(o);
    EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty()) << "a second idle runner removed";
    EXPECT_EQ(creates(p), 0);
    // The removal is answered and the Runner is gone: 2 left, as desired.
    o.in_flight.erase({kind, first[0]});
    o.runners.erase(first[0]);
    p = plan(o);
    EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty());
    EXPECT_EQ(creates(p), 0) << "one created again";
  }
}

// GitHub called the runner busy when asked to remove it: it took a job, and
// holds its capacity until busy_until; the other idle runners are the excess.
TEST(RunnerSetPlan, ARunnerGitHubCalledBusyDuringItsRemovalKeepsItsCapacity) {
  auto o = ready_set();
  o.set->spec.min_runners = 2;
  for (auto n : {"linux-a", "linux-b", "linux-c"}) add_runner(o, n, model::runner_phase::pending, true);
  auto first = subjects(plan(o), action_kind::remove_idle_runner);
  ASSERT_EQ(first.size(), 1u);
  o.runners.at(first[0]).busy_until = t0 + 1s;
  auto p = plan(o);
  auto second = subjects(p, action_kind::remove_idle_runner);
  ASSERT_EQ(second.size(), 1u) << "3 serving, 2 desired";
  EXPECT_NE(second[0], first[0]);
  EXPECT_EQ(creates(p), 0);
}

TEST(RunnerSetPlan, ARunnerWhoseJobCompletedHoldsNoCapacity) {
  auto o = ready_set();
  add_runner(o, "linux-a", model::runner_phase::running, true).job_completed = true;
  demand(o, 1);  // the next job
  auto p = plan(o);
  EXPECT_EQ(creates(p), 1);
  EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty()) << "removed before its phase was written";
}

TEST(RunnerSetPlan, ReplicasAreAFloorUnderDemandSplitOverTheVariants) {
  auto o = ready_set();
  o.set->spec.replicas = 4;
  demand(o, 1);
  EXPECT_EQ(creates(plan(o)), 4) << "a warm pool of 4 under one job";
  demand(o, 5);
  EXPECT_EQ(creates(plan(o)), 6) << "demand above the floor";
  o.set->spec.variants = {model::variant_spec{"a", {}, {}, {}, {}}, model::variant_spec{"b", {}, {}, {}, {}}};
  o.active_jobs.clear();
  demand(o, 1, "a");
  auto p = plan(o);
  EXPECT_EQ(creates(p), 4) << "one set-wide target";
  EXPECT_EQ(subjects(p, action_kind::create_runners), (names{"a"})) << "the rest goes where the jobs are";
  o.active_jobs.clear();
  p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::create_runners), (names{"a", "b"})) << "no job: evenly";
  EXPECT_EQ(creates(p), 4);
}

// ---- stabilization --------------------------------------------------------------------

TEST(RunnerSetPlan, ScaleDownStopsAtTheWindowsFloorAndWakesAtItsEnd) {
  auto o = ready_set();
  for (auto n : {"linux-a", "linux-b", "linux-c"}) add_runner(o, n, model::runner_phase::pending, true);
  auto& window = o.scale_down.emplace("", scale_down_window(10s)).first->second;
  window.floor(t0 - 5s, 2);  // desired 2 since 5 s ago
  demand(o, 0);
  auto p = plan(o);
  EXPECT_EQ(of(p, action_kind::remove_idle_runner).size(), 1u) << "down to the floor (2), not to 0";
  auto wakes = of(p, action_kind::wake);
  ASSERT_EQ(wakes.size(), 1u);
  EXPECT_EQ(wakes[0].subject, scale_down_wake(""));
  EXPECT_EQ(wakes[0].at, t0 + 10s) << "2 held until now: it leaves the window 10 s from now";
  o.in_flight.insert({action_kind::wake, scale_down_wake("")});
  EXPECT_FALSE(has(plan(o), action_kind::wake)) << "a second wake-up while one is pending";
  window.floor(t0, 0);  // what the actor records after the plan
  o.now = t0 + 10s - 1ms;
  EXPECT_EQ(of(plan(o), action_kind::remove_idle_runner).size(), 1u) << "still inside the window";
  // The window is over: down to what is desired now.
  o.now = t0 + 10s;
  o.in_flight.erase({action_kind::wake, scale_down_wake("")});
  p = plan(o);
  EXPECT_EQ(of(p, action_kind::remove_idle_runner).size(), 3u);
  EXPECT_FALSE(has(p, action_kind::wake));
}

TEST(RunnerSetPlan, ScaleUpIsNeverDelayedByTheWindow) {
  auto o = ready_set();
  o.scale_down.emplace("", scale_down_window(10s)).first->second.floor(t0 - 1s, 1);
  demand(o, 3);
  EXPECT_EQ(creates(plan(o)), 3);
}

}  // namespace
}  // namespace octorun::runnerset
