// Stuck starts: the start-up deadline a variant's runners get (set, or
// derived from sequences of observed start-ups) and what plan() does with a
// runner past it (stuck_start.hpp): a replacement within maxRunners, the
// laggard removed GitHub first, never a runner that started. No actor, no
// I/O, no cluster; the clock is the observation's.
#include "actors/runnerset/stuck_start.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "actors/runnerset/plan.hpp"
#include "actors/runnerset/startup_deadline.hpp"
#include "test/manager/runnerset_plan_fixtures.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;
using namespace plan_fixtures;
using plan_fixtures::demand;  // not the struct runnerset::demand (scaling.hpp)

startup_samples samples_of(std::initializer_list<std::int64_t> seconds) {
  startup_samples s;
  for (auto x : seconds) s.add(x);
  return s;
}

// ---- the deadline --------------------------------------------------------------------

TEST(StartupDeadline, P95IsTheNearestRank) {
  EXPECT_EQ(p95({}), std::nullopt);
  EXPECT_EQ(p95({7}), 7);
  std::deque<std::int64_t> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  EXPECT_EQ(p95(hundred), 95);
  EXPECT_EQ(p95({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}), 19);
}

TEST(StartupDeadline, TheSpecsValueWinsOverObservations) {
  auto d = startup_deadline_for(45, samples_of({5, 5, 5, 5, 5, 5}));
  EXPECT_EQ(d.value, 45s);
  EXPECT_FALSE(d.derived);
}

TEST(StartupDeadline, TooFewObservationsGetTheCeiling) {
  for (auto s : {samples_of({}), samples_of({10, 10, 10, 10})}) {
    auto d = startup_deadline_for(std::nullopt, s);
    EXPECT_EQ(d.value, 300s) << s.seconds.size() << " samples";
    EXPECT_TRUE(d.derived);
  }
}

TEST(StartupDeadline, ThreeTimesTheP95BetweenFloorAndCeiling) {
  EXPECT_EQ(startup_deadline_for(std::nullopt, samples_of({2, 3, 2, 4, 3, 2})).value, 60s) << "the floor";
  EXPECT_EQ(startup_deadline_for(std::nullopt, samples_of({40, 35, 30, 40, 38})).value, 120s);
  EXPECT_EQ(startup_deadline_for(std::nullopt, samples_of({150, 120, 160, 170, 140})).value, 300s)
      << "the ceiling";
  EXPECT_EQ(startup_deadline_for(std::nullopt, samples_of({-5, -5, -5, -5, -5})).value, 60s)
      << "a start-up the clocks stamp backwards counts 0";
}

TEST(StartupDeadline, AnOutlierAmongTwentyDoesNotMoveItTwoDo) {
  startup_samples s;
  for (int i = 0; i < 19; ++i) s.add(30);
  s.add(500);
  EXPECT_EQ(startup_deadline_for(std::nullopt, s).value, 90s);
  s.seconds.pop_front();
  s.add(200);
  EXPECT_EQ(startup_deadline_for(std::nullopt, s).value, 300s);
}

// A sequence as a cluster goes: cold nodes first, then warm ones; the
// deadline follows the window of the last 50.
TEST(StartupDeadline, FollowsTheClusterAsItWarmsUp) {
  startup_samples s;
  std::vector<std::int64_t> deadlines;
  auto observe = [&](int n, std::int64_t seconds) {
    for (int i = 0; i < n; ++i) s.add(seconds);
    deadlines.push_back(startup_deadline_for(std::nullopt, s).value.count());
  };
  observe(3, 90);   // too few
  observe(10, 90);  // cold: 3 x 90 s
  observe(40, 25);  // warm, but ten cold ones are among the last 50: the p95 is still theirs
  observe(8, 25);   // two are left, the 5 % the p95 leaves out
  EXPECT_EQ(deadlines, (std::vector<std::int64_t>{300, 270, 270, 75}));
  EXPECT_EQ(s.seconds.size(), 50u);
}

// ---- the notes -----------------------------------------------------------------------

TEST(StuckStartNotes, APodReadyOnceIsOnlineAndSampledOnce) {
  auto o = ready_set();
  auto& r = add_runner(o, "linux-a", model::runner_phase::unset, false);
  r.view.created = 1000;
  note_runner_seen(o, "linux-a", t0);
  note_runner_seen(o, "linux-a", t0 + 5s);
  EXPECT_EQ(o.runners["linux-a"].seen_at, t0) << "the first sight";
  model::runner_pod pod;
  pod.ready_at = 1042;
  note_runner_pod(o, "linux-a", pod);
  EXPECT_FALSE(o.runners["linux-a"].came_online) << "not ready";
  pod.ready = true;
  note_runner_pod(o, "linux-a", pod);
  note_runner_pod(o, "linux-a", pod);
  EXPECT_TRUE(o.runners["linux-a"].came_online);
  EXPECT_EQ(o.startups[""].seconds, (std::deque<std::int64_t>{42}));
  messages::job_info job;
  job.queued_at = 1050;  // after the runner was made: it did not wait for its start
  job.started_at = 1060;
  note_job_start(o, "linux-a", job);
  EXPECT_TRUE(o.runners["linux-a"].job_start_heard);
  EXPECT_EQ(o.startups[""].seconds, (std::deque<std::int64_t>{42}));
  note_runner_pod(o, "linux-gone", pod);  // no such runner: nothing
  EXPECT_EQ(o.runners.count("linux-gone"), 0u);
}

// A starting Runner made at 1000 whose pod was ready at 1003 (the cluster's
// clock), noted; its pod, for more notes.
model::runner_pod made_at_1000_ready_at_1003(set_observation& o, const std::string& name) {
  add_runner(o, name, model::runner_phase::unset, false).view.created = 1000;
  model::runner_pod pod;
  pod.ready = true;
  pod.ready_at = 1003;
  note_runner_pod(o, name, pod);
  return pod;
}

// Pods ready in 3 s, runners online 4 s later: a job that waited for a
// runner's whole start says so, and the start-time sizing sees 7 s, not 3:
// the whole start replaces the runner's estimate from its pod ready (each
// runner counts once, or the slow starts jobs waited for would count twice).
TEST(StuckStartNotes, AJobQueuedBeforeItsRunnerWasMadeSamplesTheWholeStartOnce) {
  auto o = ready_set();
  auto pod = made_at_1000_ready_at_1003(o, "linux-a");
  messages::job_info job;
  job.queued_at = 999;
  job.started_at = 1007;
  note_job_start(o, "linux-a", job);
  note_job_start(o, "linux-a", job);  // the same start heard again: once
  EXPECT_EQ(o.online_startups[""].seconds, (std::deque<std::int64_t>{7}));
  EXPECT_EQ(o.startups[""].seconds, (std::deque<std::int64_t>{3})) << "the deadline's: pod readiness";
  // A start GitHub did not date, or a runner this set does not hold: nothing.
  auto& b = add_runner(o, "linux-b", model::runner_phase::unset, false);
  b.view.created = 1000;
  note_job_start(o, "linux-b", messages::job_info{});
  note_job_start(o, "linux-gone", job);
  EXPECT_EQ(o.online_startups[""].seconds.size(), 1u);
  // An estimate no longer kept (50 newer samples came): the whole start is added.
  made_at_1000_ready_at_1003(o, "linux-c");
  for (int i = 0; i < 50; ++i) o.online_startups[""].add(5, {}, o.now);
  note_job_start(o, "linux-c", job);
  EXPECT_EQ(o.online_startups[""].seconds.back(), 7);
  EXPECT_EQ(std::count(o.online_startups[""].seconds.begin(), o.online_startups[""].seconds.end(), 5), 49);
}

// What a start-time target sizes from is the start to the runner online: a
// pod ready says nothing of the runner process after it, so a runner no job
// waited for adds the process start the whole starts showed (a job's start
// less its runner's pod ready).
TEST(StuckStartNotes, ARunnerNoJobWaitedForAddsTheRunnerProcessStart) {
  auto o = ready_set();
  auto pod = made_at_1000_ready_at_1003(o, "linux-a");  // no process start known yet: the pod's 3 s
  messages::job_info job;
  job.queued_at = 999;
  job.started_at = 1008;
  note_job_start(o, "linux-a", job);  // the whole start, 8 s (for the 3 s): the process took 5
  EXPECT_EQ(o.online_startups[""].seconds, (std::deque<std::int64_t>{8}));
  EXPECT_EQ(o.runner_process_starts[""].seconds, (std::deque<std::int64_t>{5}));
  auto& b = add_runner(o, "linux-b", model::runner_phase::unset, false);
  b.view.created = 2000;
  pod.ready_at = 2002;
  note_runner_pod(o, "linux-b", pod);  // warm: 2 s to its pod, 5 more to the runner
  EXPECT_EQ(o.online_startups[""].seconds, (std::deque<std::int64_t>{8, 7}));
  EXPECT_EQ(o.startups[""].seconds, (std::deque<std::int64_t>{3, 2})) << "the deadline's stay pod ready";
  // A job that came after its runner was made (it took a warm one) shows no
  // process start: its wait was not the runner's.
  job.queued_at = 2010;
  job.started_at = 2011;
  note_job_start(o, "linux-b", job);
  EXPECT_EQ(o.runner_process_starts[""].seconds.size(), 1u);
}

// A pod that waited for a node: its runner's sample says how much of its
// start-up that wait was, the pod's estimate and the whole start that
// replaces it alike, so that a target can size without it (start_time.hpp).
TEST(StuckStartNotes, ASampleKeepsItsPodsWaitForANode) {
  auto o = ready_set();
  add_runner(o, "linux-a", model::runner_phase::unset, false).view.created = 1000;
  model::runner_pod pod;
  pod.ready = true;
  pod.scheduled_at = 1060;  // a node came after a minute
  pod.ready_at = 1063;
  note_runner_scheduled(o, "linux-a", pod);  // as the actor hears them
  note_runner_pod(o, "linux-a", pod);
  EXPECT_EQ(o.online_startups[""].seconds, (std::deque<std::int64_t>{63}));
  EXPECT_EQ(o.online_startups[""].since(o.now - 1min, true), (std::deque<std::int64_t>{3}));
  EXPECT_EQ(o.newest_scheduling_wait[""], 60);
  messages::job_info job;
  job.queued_at = 999;
  job.started_at = 1068;
  note_job_start(o, "linux-a", job);
  EXPECT_EQ(o.online_startups[""].seconds, (std::deque<std::int64_t>{68}));
  EXPECT_EQ(o.online_startups[""].since(o.now - 1min, true), (std::deque<std::int64_t>{8}));
  // A pod scheduled within the few seconds the scheduler takes waited for
  // no node: nothing is taken off.
  add_runner(o, "linux-b", model::runner_phase::unset, false).view.created = 2000;
  pod.scheduled_at = 2002;
  pod.ready_at = 2005;
  note_runner_scheduled(o, "linux-b", pod);
  note_runner_pod(o, "linux-b", pod);
  EXPECT_EQ(o.online_startups[""].since(o.now - 1min, true), (std::deque<std::int64_t>{8, 10}));
  EXPECT_EQ(o.newest_scheduling_wait[""], 2);
}

// ---- the plan ------------------------------------------------------------------------

// A webhook set with one job and its one runner, seen `ago` before now,
// not online.
set_observation one_starting(std::chrono::seconds ago, std::int32_t max_runners = 10) {
  auto o = ready_set();
  o.set->spec.max_runners = max_runners;
  demand(o, 1);
  auto& r = add_runner(o, "linux-a", model::runner_phase::pending, false);
  r.seen_at = t0 - ago;
  r.status_runner_id = 11;
  return o;
}

TEST(StuckStartPlan, BeforeItsDeadlineARunnerStartsAndTheSetWakesAtIt) {
  auto o = one_starting(299s);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 0);
  EXPECT_FALSE(has(p, action_kind::remove_stuck_start));
  auto wakes = of(p, action_kind::wake);
  auto it = std::find_if(wakes.begin(), wakes.end(),
                         [](const action& a) { return a.subject == stuck_start_wake(""); });
  ASSERT_NE(it, wakes.end());
  EXPECT_EQ(it->at, t0 + 1s) << "300 s (the ceiling: nothing observed yet) after it was seen";
}

TEST(StuckStartPlan, PastItsDeadlineItIsReplacedAndRemovedGitHubFirst) {
  auto o = one_starting(300s);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 1) << "its replacement";
  auto removals = of(p, action_kind::remove_stuck_start);
  ASSERT_EQ(removals.size(), 1u);
  EXPECT_EQ(removals[0].subject, "linux-a");
  EXPECT_EQ(removals[0].id, 11) << "removed from GitHub by its id";
  EXPECT_EQ(removals[0].count, 300);
  EXPECT_TRUE(removals[0].on) << "derived";
  EXPECT_FALSE(has(p, action_kind::remove_idle_runner));
}

// The laggard holds its slot until its Runner is gone: in a full set the
// replacement waits for it.
TEST(StuckStartPlan, AFullSetReplacesOnceTheLaggardIsGone) {
  auto o = one_starting(400s, 1);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 0) << "maxRunners 1 is held by the laggard";
  EXPECT_EQ(subjects(p, action_kind::remove_stuck_start), (names{"linux-a"}));
  o.in_flight.insert({action_kind::delete_runner, "linux-a"});  // its removal goes
  p = plan(o);
  EXPECT_EQ(creates(p), 0);
  EXPECT_FALSE(has(p, action_kind::remove_stuck_start)) << "not twice";
  o.in_flight.erase({action_kind::delete_runner, "linux-a"});
  o.runners["linux-a"].view.deleting = true;  // behind its finalizer
  p = plan(o);
  EXPECT_EQ(creates(p), 0);
  EXPECT_FALSE(has(p, action_kind::remove_stuck_start));
  o.runners.erase("linux-a");
  EXPECT_EQ(creates(plan(o)), 1);
}

// Its replacement, being made and then starting, is never taken for an
// excess runner while the laggard's removal is under way.
TEST(StuckStartPlan, TheReplacementIsNoExcessWhileTheLaggardGoes) {
  auto o = one_starting(301s);
  o.in_flight.insert({action_kind::delete_runner, "linux-a"});
  o.in_flight.insert({action_kind::create_runners, "linux-b"}, "");
  auto p = plan(o);
  EXPECT_EQ(creates(p), 0);
  EXPECT_FALSE(has(p, action_kind::remove_idle_runner));
  o.in_flight.erase({action_kind::create_runners, "linux-b"});
  add_runner(o, "linux-b", model::runner_phase::unset, false).seen_at = t0;
  p = plan(o);
  EXPECT_EQ(creates(p), 0);
  EXPECT_FALSE(has(p, action_kind::remove_idle_runner)) << "linux-b serves the job";
  EXPECT_FALSE(has(p, action_kind::remove_stuck_start));
  // Its removal told (execute.cpp), GitHub's answered: its DELETE goes, and
  // the watch shows it deleted before the DELETE's answer comes.
  o.runners["linux-a"].stuck_start_noted = true;
  o.runners["linux-a"].view.deleting = true;
  p = plan(o);
  EXPECT_EQ(creates(p), 0);
  EXPECT_FALSE(has(p, action_kind::remove_idle_runner)) << "linux-b serves the job";
  o.in_flight.erase({action_kind::delete_runner, "linux-a"});
  p = plan(o);
  EXPECT_FALSE(has(p, action_kind::remove_idle_runner));
  EXPECT_FALSE(has(p, action_kind::remove_stuck_start)) << "deleted already";
  // Whatever closes the gate for new ones meanwhile, it stays on its way out.
  o.in_flight.insert({action_kind::delete_runner, "linux-a"});
  o.runners["linux-a"].view.deleting = false;
  o.runner_registration_error = "403 Forbidden";
  p = plan(o);
  EXPECT_EQ(creates(p), 0);
  EXPECT_FALSE(has(p, action_kind::remove_idle_runner));
}

TEST(StuckStartPlan, ARunnerThatStartedIsNoLaggard) {
  struct started {
    const char* what;
    void (*make)(observed_runner&);
  };
  const started cases[] = {
      {"its pod is ready (status)", [](observed_runner& r) { r.view.pod_ready = true; }},
      {"its pod was ready once (watch)", [](observed_runner& r) { r.came_online = true; }},
      {"a job start named it", [](observed_runner& r) { r.job_start_heard = true; }},
      {"its status has a job",
       [](observed_runner& r) {
         r.view.has_job = true;
         r.view.phase = model::runner_phase::running;
       }},
      {"GitHub called it busy", [](observed_runner& r) { r.busy_until = t0 + 10s; }},
      {"its job completed", [](observed_runner& r) { r.job_completed = true; }},
      {"it finished", [](observed_runner& r) { r.view.phase = model::runner_phase::succeeded; }},
      {"it is being deleted", [](observed_runner& r) { r.view.deleting = true; }},
      {"the set never saw it start (no first sight)", [](observed_runner& r) { r.seen_at = {}; }},
  };
  for (const auto& c : cases) {
    auto o = one_starting(3600s);
    c.make(o.runners["linux-a"]);
    auto p = plan(o);
    EXPECT_FALSE(has(p, action_kind::remove_stuck_start)) << c.what;
    EXPECT_FALSE(has(p, action_kind::remove_idle_runner)) << c.what;
  }
}

TEST(StuckStartPlan, NoReplacementWhereAReplacementWouldWaitAsWell) {
  auto refused = one_starting(400s);
  refused.runner_registration_error = "403 Forbidden";
  EXPECT_FALSE(has(plan(refused), action_kind::remove_stuck_start)) << "GitHub refuses registrations";
  EXPECT_EQ(creates(plan(refused)), 0);
  auto paused_budget = one_starting(400s);
  paused_budget.budget.paused_until = t0 + 60s;
  EXPECT_FALSE(has(plan(paused_budget), action_kind::remove_stuck_start)) << "the GitHub budget is paused";
  auto unregistered = one_starting(400s);
  unregistered.set->spec.intake = model::intake_mode::listener;
  unregistered.runner_group_id = 1;
  EXPECT_FALSE(has(plan(unregistered), action_kind::remove_stuck_start)) << "no scale set yet";
}

TEST(StuckStartPlan, TheSpecsDeadlineAndAVariantsOwn) {
  auto o = one_starting(31s);
  o.set->spec.startup_timeout_seconds = 30;
  auto removals = of(plan(o), action_kind::remove_stuck_start);
  ASSERT_EQ(removals.size(), 1u);
  EXPECT_EQ(removals[0].count, 30);
  EXPECT_FALSE(removals[0].on) << "set, not derived";

  auto v = ready_set();
  v.set->spec.startup_timeout_seconds = 30;
  v.set->spec.variants = {model::variant_spec{"big", {"big"}, {}, {}, {}},
                          model::variant_spec{"small", {"small"}, {}, {}, {}}};
  v.set->spec.variants[0].startup_timeout_seconds = 120;
  for (const auto& name : {"big", "small"}) {
    demand(v, 1, name);
    add_runner(v, std::string("linux-") + name + "-a", model::runner_phase::pending, false, name).seen_at =
        t0 - 60s;
  }
  for (const auto& obj : desired_pod_resources(*v.set)) v.applied_objects[obj.key] = obj.body;
  EXPECT_EQ(subjects(plan(v), action_kind::remove_stuck_start), (names{"linux-small-a"}));
}

TEST(StuckStartPlan, ADerivedDeadlineFollowsTheVariantsStartUps) {
  auto o = one_starting(61s);
  for (int i = 0; i < 10; ++i) o.startups[""].add(20);  // 3 x 20 s = 60 s
  EXPECT_EQ(subjects(plan(o), action_kind::remove_stuck_start), (names{"linux-a"}));
  o.runners["linux-a"].seen_at = t0 - 59s;
  EXPECT_FALSE(has(plan(o), action_kind::remove_stuck_start));
}

// A registered laggard's removal is GitHub cleanup: while the budget is
// kept for new runners it waits, and the replacement goes all the same.
TEST(StuckStartPlan, WhileCleanupWaitsForTheBudgetTheReplacementGoes) {
  auto o = one_starting(400s);
  o.budget.limit = 5000;
  o.budget.remaining = 10;
  o.budget.reset_at = t0 + 600s;
  auto p = plan(o);
  EXPECT_EQ(creates(p), 1);
  EXPECT_FALSE(has(p, action_kind::remove_stuck_start));
}

TEST(StuckStartEvent, AWarningNamingTheRunnerAndTheDeadline) {
  auto e = stuck_start_event("linux-gpu-abcde", "gpu", 90s, true);
  EXPECT_TRUE(e.warning);
  EXPECT_EQ(e.reason, "StuckStartReplaced");
  EXPECT_EQ(e.action, "Replace");
  EXPECT_NE(e.note.find("Runner linux-gpu-abcde (variant gpu) did not come online within 90 s (derived"),
            std::string::npos)
      << e.note;
  EXPECT_NE(
      stuck_start_event("linux-abcde", "", 30s, false).note.find("within 30 s (spec.startupTimeoutSeconds)"),
      std::string::npos);
}

}  // namespace
}  // namespace octorun::runnerset
