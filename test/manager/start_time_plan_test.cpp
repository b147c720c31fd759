// Start-time targets in the RunnerSet's plan (start_time.hpp): the warm
// runners a target sizes come on top of demand, within maxRunners, never by
// removing a busy runner; they drain to minRunners once demand stops; the
// StartTimeTargetMet condition, status.startTime and the Events say why.
// The notes the actor makes as job messages come. No actor, no I/O.
#include <gtest/gtest.h>

#include "actors/runnerset/set_events.hpp"
#include "actors/runnerset/start_time.hpp"
#include "test/manager/runnerset_plan_fixtures.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;
using namespace plan_fixtures;
using plan_fixtures::demand;  // not the struct runnerset::demand (scaling.hpp)

// A webhook set with a 5 s target whose runners come online in 60 s, and
// `jobs` jobs that came in the last minute (a rate of 1 a second over the
// short window: Poisson(jobs / 120 * 55) at 95 %, plus one, kept warm).
set_observation targeted(int jobs, std::int32_t max_runners = 100, const std::string& variant = "") {
  auto o = ready_set();
  o.set->spec.max_runners = max_runners;
  o.set->spec.start_time_target = model::start_time_target_spec{5};
  for (int i = 0; i < 5; ++i) o.online_startups[variant].add(60, {}, o.now);
  for (int i = 0; i < jobs; ++i) o.job_arrivals[variant].add_arrival(i, o.now - 60s + i * 1s);
  return o;
}

TEST(StartTimePlan, WarmRunnersComeOnTopOfDemand) {
  auto o = targeted(12);
  demand(o, 2);
  const auto warm = model::poisson_quantile(12.0 / 120 * 55, 0.95) + 1;
  auto p = plan(o);
  ASSERT_EQ(p.desired.size(), 1u);
  EXPECT_EQ(p.desired[0].second, warm + 2);
  EXPECT_EQ(creates(p), warm + 2);
  auto c = published_condition(p, "StartTimeTargetMet");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "True");
  EXPECT_EQ(c->reason, "TargetMet");
  EXPECT_NE(c->message.find("runners take 60 s to come online at the 95th percentile: " +
                            std::to_string(warm) + " runners kept warm"),
            std::string::npos)
      << c->message;
  EXPECT_NE(published_status(p).find(
                R"("startTime":{"targetP95Seconds":5,"runnerStartupP95Seconds":60,"recentJobs":12,)"
                R"("warmRunners":)" +
                std::to_string(warm) + "}"),
            std::string::npos)
      << published_status(p);
}

TEST(StartTimePlan, WithoutATargetNothingChanges) {
  auto o = targeted(12);
  o.set->spec.start_time_target.reset();
  demand(o, 2);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 2);
  EXPECT_FALSE(published_condition(p, "StartTimeTargetMet"));
  EXPECT_NE(published_status(p).find(R"("startTime":null)"), std::string::npos) << "a former one is cleared";
}

// The cold start meets the target: no warm runner beyond minRunners.
TEST(StartTimePlan, AFastStartUpNeedsNoWarmRunners) {
  auto o = targeted(12);
  o.set->spec.min_runners = 1;
  o.set->spec.start_time_target = model::start_time_target_spec{60};
  auto p = plan(o);
  EXPECT_EQ(creates(p), 1);
  EXPECT_EQ(published_condition(p, "StartTimeTargetMet")->reason, "TargetMet");
}

// Three busy runners in a set of four: one warm runner fits, the rest do
// not; the busy ones are never candidates, and maxRunners holds.
TEST(StartTimePlan, MaxRunnersBoundsTheWarmRunnersAndBusyOnesStay) {
  auto o = targeted(12, 4);
  demand(o, 3);
  for (auto name : {"linux-a", "linux-b", "linux-c"}) add_runner(o, name, model::runner_phase::running, true);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 1);
  EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty());
  auto c = published_condition(p, "StartTimeTargetMet");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "MaxRunnersTooLow");
  EXPECT_NE(c->message.find("raise maxRunners, or the target"), std::string::npos) << c->message;
}

// Ten minutes after the last job the warm runners go, down to minRunners,
// idle ones only; the plan asks to be woken when the last job leaves.
TEST(StartTimePlan, WhenDemandStopsThePoolDrainsToMinRunners) {
  auto o = targeted(12);
  o.set->spec.min_runners = 1;
  for (auto name : {"linux-a", "linux-b", "linux-c", "linux-d"})
    add_runner(o, name, model::runner_phase::pending, true);
  add_runner(o, "linux-busy", model::runner_phase::running, true);
  demand(o, 1);
  auto p = plan(o);
  EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty()) << "still warm";
  auto wakes = of(p, action_kind::wake);
  auto wake =
      std::find_if(wakes.begin(), wakes.end(), [](const action& a) { return a.subject == "start-time "; });
  ASSERT_NE(wake, wakes.end());
  EXPECT_EQ(wake->at, o.now - 60s + 10min) << "when the oldest job leaves the window";

  o.now += 10min;
  p = plan(o);
  EXPECT_EQ(p.desired[0].second, 2) << "minRunners 1 on top of the busy runner's job";
  EXPECT_EQ(subjects(p, action_kind::remove_idle_runner).size(), 3u);
  for (const auto& name : subjects(p, action_kind::remove_idle_runner)) EXPECT_NE(name, "linux-busy");
  auto c = published_condition(p, "StartTimeTargetMet");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "True");
  EXPECT_EQ(c->reason, "NoRecentJobs");
}

// The newest start-ups size the pool: a morning's node start-ups no longer
// do once five of the last two minutes say runners start in seconds; with
// none of the last ten minutes, a runner starting now bounds them.
TEST(StartTimePlan, TheNewestStartUpsSizeThePool) {
  auto o = targeted(12);
  o.online_startups[""] = {};
  for (int i = 0; i < 10; ++i) o.online_startups[""].add(120, {}, o.now - 8min);  // the morning's
  for (int i = 0; i < 5; ++i) o.online_startups[""].add(8, {}, o.now - 30s);
  auto p = plan(o);
  const auto warm = model::poisson_quantile(12.0 / 120 * 3, 0.95) + 1;
  EXPECT_EQ(creates(p), warm);
  EXPECT_NE(published_status(p).find(R"("runnerStartupP95Seconds":8,)"), std::string::npos)
      << published_status(p);

  // Four in the short window are too few: the window's fifteen say 120 s.
  o.online_startups[""].seconds.pop_back();
  o.online_startups[""].heard.pop_back();
  p = plan(o);
  EXPECT_NE(published_status(p).find(R"("runnerStartupP95Seconds":120,)"), std::string::npos)
      << published_status(p);

  // Yesterday's quick start-ups only: a runner starting for 90 s says more.
  o.online_startups[""] = {};
  for (int i = 0; i < 5; ++i) o.online_startups[""].add(8, {}, o.now - 16h);
  auto& starting = add_runner(o, "linux-a", model::runner_phase::pending, false);
  starting.seen_at = o.now - 90s;
  p = plan(o);
  EXPECT_EQ(creates(p), model::poisson_quantile(12.0 / 120 * 85, 0.95) + 1 - 1) << "one is starting already";
  auto c = published_condition(p, "StartTimeTargetMet");
  ASSERT_TRUE(c);
  EXPECT_NE(c->message.find("one has been starting for 90 s"), std::string::npos) << c->message;
}

// Start-ups that waited for a node: while the newest runner pod found room,
// a runner made now does not wait for one, and the pool is sized over the
// start-ups less those waits; while it waited, over the whole start-ups.
// The status shows the whole start-ups' p95 either way.
TEST(StartTimePlan, WaitsForANodeSizeThePoolOnlyWhileAPodWaitsForOne) {
  auto o = targeted(12);
  o.online_startups[""] = {};
  for (int i = 0; i < 5; ++i) o.online_startups[""].add(88, {}, o.now - 30s, 60);  // a node, then 28 s
  o.newest_scheduling_wait[""] = 1;
  auto p = plan(o);
  EXPECT_EQ(creates(p), model::poisson_quantile(12.0 / 120 * 23, 0.95) + 1);
  EXPECT_NE(published_status(p).find(R"("runnerStartupP95Seconds":88,)"), std::string::npos)
      << published_status(p);

  o.newest_scheduling_wait[""] = 45;  // the newest pod waited for a node
  p = plan(o);
  EXPECT_EQ(creates(p), model::poisson_quantile(12.0 / 120 * 83, 0.95) + 1);

  // No pod scheduled yet: nothing says a node has room.
  o.newest_scheduling_wait.clear();
  p = plan(o);
  EXPECT_EQ(creates(p), model::poisson_quantile(12.0 / 120 * 83, 0.95) + 1);
}

// A variant's own target; the set says it per variant, and the condition
// names the variant.
TEST(StartTimePlan, AVariantsTargetIsItsOwn) {
  auto o = targeted(12, 100, "gpu");
  o.set->spec.start_time_target.reset();
  model::variant_spec cpu, gpu;
  cpu.name = "cpu";
  cpu.runner_labels = {"cpu"};
  gpu.name = "gpu";
  gpu.runner_labels = {"gpu"};
  gpu.start_time_target = model::start_time_target_spec{5};
  o.set->spec.variants = {cpu, gpu};
  auto p = plan(o);
  ASSERT_EQ(p.desired.size(), 2u);
  EXPECT_EQ(p.desired[0].second, 0);
  EXPECT_GT(p.desired[1].second, 0);
  auto c = published_condition(p, "StartTimeTargetMet");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->message.rfind("Variant gpu: ", 0), 0u) << c->message;
  const auto status = published_status(p);
  EXPECT_NE(status.find(R"("startTime":null)"), std::string::npos) << status;
  EXPECT_NE(status.find(R"("name":"gpu")"), status.find(R"("startTime":{"targetP95Seconds":5)")) << status;
  EXPECT_NE(status.find(R"("startTime":{"targetP95Seconds":5)"), std::string::npos) << status;
}

// ---- the notes -----------------------------------------------------------------------

messages::job_info job(std::int64_t id, std::vector<std::string> labels = {"linux"}) {
  messages::job_info j;
  j.job_id = id;
  j.labels = std::move(labels);
  return j;
}

TEST(StartTimeNotes, EachJobArrivesOnceInItsVariant) {
  auto o = listener_set();
  model::variant_spec cpu, gpu;
  cpu.name = "cpu";
  cpu.runner_labels = {"cpu"};
  gpu.name = "gpu";
  gpu.runner_labels = {"gpu"};
  o.set->spec.variants = {cpu, gpu};
  registered(o, 0, "gpu");
  auto by_scale_set = job(1, {"whatever"});
  by_scale_set.scale_set_id = 7;  // gpu's
  note_job_arrival(o, by_scale_set, t0);
  note_job_arrival(o, by_scale_set, t0 + 1s);  // JobAssigned after JobAvailable
  note_job_arrival(o, job(2, {"cpu"}), t0);
  note_job_arrival(o, job(3, {"arm64"}), t0);  // no variant takes it
  EXPECT_EQ(o.job_arrivals["gpu"].arrivals().size(), 1u);
  EXPECT_EQ(o.job_arrivals["cpu"].arrivals().size(), 1u);
  EXPECT_EQ(o.job_arrivals.size(), 2u);
}

TEST(StartTimeNotes, AJobStartIsMeasuredByGitHubsTimesAndForgottenAfterTheWindow) {
  auto o = ready_set();
  auto j = job(1);
  j.queued_at = 1'000'000;
  j.started_at = 1'000'004;
  note_job_start_time(o, "", j, t0, 1'000'010);
  j.started_at = 0;  // a message without its time: not measured
  note_job_start_time(o, "", job(2), t0, 1'000'010);
  ASSERT_EQ(o.job_arrivals[""].job_starts().size(), 1u);
  EXPECT_EQ(o.job_arrivals[""].job_starts().front().second, 4);
  o.now = t0 + 10min;
  forget_old_jobs(o);
  EXPECT_TRUE(o.job_arrivals.empty());
}

// ---- the Events ----------------------------------------------------------------------

TEST(StartTimeEvents, AWarningWhenItTurnsFalseANormalWhenItIsMetAgain) {
  set_summary met, missed, met_later;
  met.start_time_status = "True";
  met.start_time_reason = "TargetMet";
  met.start_time_message = "1 job";
  missed = met;
  missed.start_time_status = "False";
  missed.start_time_reason = "MaxRunnersTooLow";
  missed.start_time_message = "raise maxRunners";
  met_later = met;
  met_later.start_time_message = "2 jobs";
  auto events = set_events(met, missed, "github");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].warning);
  EXPECT_EQ(events[0].reason, "StartTimeMaxRunnersTooLow");
  EXPECT_EQ(events[0].note, "raise maxRunners");
  events = set_events(missed, met_later, "github");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].warning);
  EXPECT_EQ(events[0].reason, "StartTimeTargetMet");
  EXPECT_TRUE(set_events(met, met_later, "github").empty()) << "only its counts changed";
}

}  // namespace
}  // namespace octorun::runnerset
