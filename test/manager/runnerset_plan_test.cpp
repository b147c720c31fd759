// The RunnerSet actor's reconcile, rule by rule, as plan() decides it over
// an observation: no actor, no I/O, no cluster.
#include <gtest/gtest.h>

#include <algorithm>

#include "actors/runnerset/plan.hpp"
#include "actors/runnerset/set_status.hpp"
#include "model/pod_config.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;
const auto t0 = std::chrono::steady_clock::time_point{} + 1h;

// A webhook set (min 0, max 10), its finalizer on, its credentials loaded.
set_observation ready_set() {
  set_observation o;
  o.now = t0;
  o.scale_down_period = 10s;
  model::runnerset set;
  set.metadata.name = "linux";
  set.spec.min_runners = 0;
  set.spec.max_runners = 10;
  o.set = set;
  o.has_finalizer = true;
  o.credentials_loaded = true;
  o.scale_set_client = true;
  // Its ServiceAccount and PodDisruptionBudget applied (pod_resources.hpp).
  for (const auto& obj : desired_pod_resources(set)) o.applied_objects[obj.key] = obj.body;
  return o;
}

// The same under the Listener intake, its runner group known.
set_observation listener_set() {
  auto o = ready_set();
  o.set->spec.intake = model::intake_mode::listener;
  o.runner_group_id = 1;
  return o;
}

// Its default variant's scale set registered, listening, reporting `assigned` jobs.
void registered(set_observation& o, std::int64_t assigned, const std::string& variant = "") {
  auto& e = o.scale_sets[variant];
  e.id = 7;
  e.listening = true;
  e.reported = true;
  e.labels = {o.set->metadata.name + (variant.empty() ? "" : "-" + variant)};
  e.assigned_jobs = assigned;
}

observed_runner& add_runner(set_observation& o, const std::string& name, runner::phase phase, bool ready,
                            const std::string& variant = "") {
  auto& r = o.runners[name];
  r.view.name = name;
  r.view.phase = phase;
  r.view.pod_ready = ready;
  r.view.has_job = phase == runner::phase::running;
  r.variant = variant;
  return r;
}

void demand(set_observation& o, int jobs, const std::string& variant = "") {
  for (int i = 0; i < jobs; ++i)
    o.active_jobs[1000 + static_cast<std::int64_t>(o.active_jobs.size())] = variant;
}

std::vector<action> of(const set_plan& p, action_kind kind) {
  std::vector<action> out;
  std::copy_if(p.actions.begin(), p.actions.end(), std::back_inserter(out),
               [&](const action& a) { return a.kind == kind; });
  return out;
}
std::vector<std::string> subjects(const set_plan& p, action_kind kind) {
  std::vector<std::string> out;
  for (const auto& a : of(p, kind)) out.push_back(a.subject);
  return out;
}
std::int32_t creates(const set_plan& p) {
  std::int32_t n = 0;
  for (const auto& a : of(p, action_kind::create_runners)) n += a.count;
  return n;
}
bool has(const set_plan& p, action_kind kind) { return !of(p, kind).empty(); }
using names = std::vector<std::string>;

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
  add_runner(o, "linux-a", runner::phase::pending, true);
  add_runner(o, "linux-b", runner::phase::running, true);
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
  add_runner(o, "linux-a", runner::phase::pending, true);
  add_runner(o, "linux-b", runner::phase::running, true);
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
  add_runner(o, "linux-a", runner::phase::pending, true);
  demand(o, 1);
  auto first = of(plan(o), action_kind::publish_status);
  ASSERT_EQ(first.size(), 1u) << "the first write waits for nothing";
  o.published_status = first[0].text;
  o.status_written_at = o.now;
  demand(o, 1);  // a second job: new counts within the hold
  add_runner(o, "linux-b", runner::phase::pending, false);
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
  add_runner(o, "linux-aaaaa", runner::phase::pending, false);
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
  add_runner(o, "linux-aaaaa", runner::phase::pending, true);
  add_runner(o, "linux-bbbbb", runner::phase::pending, true);
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
  add_runner(o, "linux-ccccc", runner::phase::pending, true);
  EXPECT_EQ(creates(plan(o)), 0);
  EXPECT_FALSE(has(plan(o), action_kind::confirm_create));
}

TEST(RunnerSetPlan, FinishedRunnersAreDeletedAndHoldNoCapacity) {
  auto o = ready_set();
  demand(o, 1);
  add_runner(o, "linux-done1", runner::phase::succeeded, false);
  add_runner(o, "linux-fail1", runner::phase::failed, false);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 1);
  EXPECT_EQ(subjects(p, action_kind::delete_runner), (names{"linux-done1", "linux-fail1"}));
  o.in_flight.insert({action_kind::delete_runner, "linux-done1"});
  EXPECT_EQ(subjects(plan(o), action_kind::delete_runner), (names{"linux-fail1"})) << "deleted twice";
}

TEST(RunnerSetPlan, IdleRunnersAreRemovedGitHubFirstByTheBestKnownId) {
  auto o = ready_set();
  add_runner(o, "linux-a", runner::phase::pending, true).status_runner_id = 11;
  add_runner(o, "linux-b", runner::phase::pending, false).secret_runner_id = 12;  // status not published yet
  add_runner(o, "linux-c", runner::phase::pending, false);                        // never registered
  auto removals = of(plan(o), action_kind::remove_idle_runner);
  ASSERT_EQ(removals.size(), 3u);
  std::map<std::string, std::int64_t> ids;
  for (const auto& a : removals) ids[a.subject] = a.id;
  EXPECT_EQ(ids, (std::map<std::string, std::int64_t>{{"linux-a", 11}, {"linux-b", 12}, {"linux-c", 0}}));
}

TEST(RunnerSetPlan, BusyRunnersAreNeverCandidatesAndHoldCapacity) {
  auto o = ready_set();
  add_runner(o, "linux-run", runner::phase::running, true);
  add_runner(o, "linux-busy", runner::phase::pending, true).busy_until = t0 + 1s;  // GitHub said busy
  add_runner(o, "linux-going", runner::phase::pending, true);
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

TEST(RunnerSetPlan, ARunnerWhoseJobCompletedHoldsNoCapacity) {
  auto o = ready_set();
  add_runner(o, "linux-a", runner::phase::running, true).job_completed = true;
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
  for (auto n : {"linux-a", "linux-b", "linux-c"}) add_runner(o, n, runner::phase::pending, true);
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

// ---- Listener intake --------------------------------------------------------------------

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
  add_runner(o, "linux-a", runner::phase::pending, true);
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

// ---- retired variants ------------------------------------------------------------------

set_observation with_retired_variant() {
  auto o = ready_set();
  o.set->spec.variants = {model::variant_spec{"a", {}, {}, {}, {}}};
  return o;
}

TEST(RunnerSetPlan, ARetiredVariantsRunnersAreDrainedBusyOnesAfterTheirJob) {
  auto o = with_retired_variant();
  add_runner(o, "linux-old-idle", runner::phase::pending, true, "old").status_runner_id = 5;
  add_runner(o, "linux-old-run", runner::phase::running, true, "old");
  add_runner(o, "linux-old-done", runner::phase::succeeded, false, "old");
  add_runner(o, "linux-old-held", runner::phase::pending, true, "old").busy_until = t0 + 1s;
  o.scale_sets["old"].id = 9;
  o.scale_sets["old"].listening = true;
  auto p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::remove_idle_runner), (names{"linux-old-idle"}));
  EXPECT_EQ(subjects(p, action_kind::delete_runner), (names{"linux-old-done"}));
  EXPECT_EQ(subjects(p, action_kind::stop_listener), (names{"old"}));
  EXPECT_FALSE(has(p, action_kind::delete_scale_set)) << "its scale set goes after its runners";
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("name":"old","scaleSetId":9)"), std::string::npos) << status[0].text;
}

TEST(RunnerSetPlan, ARetiredVariantsScaleSetGoesOnceItsRunnersAre) {
  auto o = with_retired_variant();
  o.set->status.variants = {model::variant_status{"old", 9, {}}};  // recorded before a restart
  auto del = of(plan(o), action_kind::delete_scale_set);
  ASSERT_EQ(del.size(), 1u);
  EXPECT_EQ(del[0].subject, "old");
  EXPECT_EQ(del[0].id, 9);
  o.in_flight.insert({action_kind::delete_scale_set, "9"});
  EXPECT_FALSE(has(plan(o), action_kind::delete_scale_set));
  o.deleted_scale_sets.insert(9);
  auto status = of(plan(o), action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].text.find(R"("old")"), std::string::npos) << "still in the status once gone";
}

// ---- deletion ----------------------------------------------------------------------------

set_observation deleting_set() {
  auto o = listener_set();
  o.set->metadata.deleting = true;
  registered(o, 1);
  // Its per-set objects deleted already (DeletionDeletesThePerSetObjectsLast).
  for (const auto& key : pod_resource_keys("linux")) o.deleted_objects.insert(key);
  return o;
}

TEST(RunnerSetPlan, DeletionDeletesEveryRunnerFirst) {
  auto o = deleting_set();
  add_runner(o, "linux-a", runner::phase::pending, true);
  add_runner(o, "linux-b", runner::phase::running, true);
  add_runner(o, "linux-c", runner::phase::pending, true).view.deleting = true;
  auto p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::delete_runner), (names{"linux-a", "linux-b"}));
  EXPECT_EQ(subjects(p, action_kind::stop_listener), (names{""}));
  EXPECT_FALSE(has(p, action_kind::confirm_no_runners));
  EXPECT_FALSE(has(p, action_kind::delete_scale_set));
  EXPECT_FALSE(has(p, action_kind::patch_finalizer));
  EXPECT_FALSE(has(p, action_kind::publish_status));
}

TEST(RunnerSetPlan, DeletionWaitsForCreatesInFlight) {
  auto o = deleting_set();
  o.in_flight.insert({action_kind::create_runners, "linux-aaaaa"}, "");
  EXPECT_FALSE(has(plan(o), action_kind::confirm_no_runners));
}

TEST(RunnerSetPlan, DeletionConfirmsNoRunnersThenDeletesScaleSetsThenTheFinalizer) {
  auto o = deleting_set();
  o.set->status.variants = {model::variant_status{"old", 9, {}}};
  auto p = plan(o);
  EXPECT_EQ(of(p, action_kind::confirm_no_runners).size(), 1u);
  EXPECT_FALSE(has(p, action_kind::delete_scale_set));
  o.in_flight.insert({action_kind::confirm_no_runners, ""});
  EXPECT_FALSE(has(plan(o), action_kind::confirm_no_runners)) << "listed twice";
  o.in_flight.erase({action_kind::confirm_no_runners, ""});
  o.no_runners_confirmed = true;
  p = plan(o);
  std::vector<std::int64_t> ids;
  for (const auto& a : of(p, action_kind::delete_scale_set)) ids.push_back(a.id);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{7, 9}));
  EXPECT_FALSE(has(p, action_kind::patch_finalizer)) << "released before its scale sets are gone";
  o.deleted_scale_sets = {7, 9};
  p = plan(o);
  auto fin = of(p, action_kind::patch_finalizer);
  ASSERT_EQ(fin.size(), 1u);
  EXPECT_FALSE(fin[0].on);
}

TEST(RunnerSetPlan, DeletionWithTheCredentialsGoneLeavesGitHubItsRegistrations) {
  auto o = deleting_set();
  o.credentials_loaded = false;
  o.scale_set_client = false;
  o.credentials_gone = true;
  o.no_runners_confirmed = true;
  EXPECT_TRUE(github_unreachable_for_deletion(o));
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::delete_scale_set));
  ASSERT_TRUE(has(p, action_kind::patch_finalizer));
  EXPECT_FALSE(of(p, action_kind::patch_finalizer)[0].on);
  // Only gone: a Secret that merely fails to read blocks the release.
  o.credentials_gone = false;
  EXPECT_FALSE(github_unreachable_for_deletion(o));
  EXPECT_FALSE(has(plan(o), action_kind::patch_finalizer));
}

TEST(RunnerSetPlan, VariantOfARunnerBeingCreated) {
  auto o = ready_set();
  add_runner(o, "linux-a-x", runner::phase::pending, true, "a");
  o.in_flight.insert({action_kind::create_runners, "linux-b-y"}, "b");
  EXPECT_EQ(variant_of(o, "linux-a-x"), "a");
  EXPECT_EQ(variant_of(o, "linux-b-y"), "b");
  EXPECT_EQ(variant_of(o, "nope"), "");
}

// ---- the runner pods' per-set objects (pod_resources.hpp) ---------------------------

TEST(RunnerSetPlan, PerSetObjectsAreAppliedBeforeAnyRunnerIsCreated) {
  auto o = ready_set();
  o.applied_objects.clear();
  demand(o, 2);
  auto p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::apply_object),
            (names{"ServiceAccount/octorun-runner-linux", "PodDisruptionBudget/octorun-busy-linux"}));
  EXPECT_EQ(creates(p), 0) << "a pod naming a ServiceAccount that does not exist is refused";
  o.in_flight.insert({action_kind::apply_object, "ServiceAccount/octorun-runner-linux"});
  EXPECT_EQ(subjects(plan(o), action_kind::apply_object), (names{"PodDisruptionBudget/octorun-busy-linux"}));
  for (const auto& obj : desired_pod_resources(*o.set)) o.applied_objects[obj.key] = obj.body;
  o.in_flight.erase({action_kind::apply_object, "ServiceAccount/octorun-runner-linux"});
  p = plan(o);
  EXPECT_FALSE(has(p, action_kind::apply_object)) << "applied again with nothing changed";
  EXPECT_EQ(creates(p), 2);
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("type":"PodConfigReady","status":"True","reason":"Applied")"),
            std::string::npos)
      << status[0].text;
}

TEST(RunnerSetPlan, ContainerModeKubernetesAddsTheHooksRoleAndDropsItWhenNothingNeedsIt) {
  auto o = ready_set();
  o.set->spec.pod.container_mode = model::container_mode_spec{model::container_mode::kubernetes, ""};
  auto p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::apply_object),
            (names{"Role/octorun-runner-linux", "RoleBinding/octorun-runner-linux"}));
  for (const auto& obj : desired_pod_resources(*o.set)) o.applied_objects[obj.key] = obj.body;
  EXPECT_FALSE(has(plan(o), action_kind::apply_object));

  // The mode is dropped while a runner made in it still runs its job.
  o.set->spec.pod.container_mode.reset();
  add_runner(o, "linux-a", runner::phase::running, true).kubernetes_mode = true;
  EXPECT_FALSE(has(plan(o), action_kind::delete_object)) << "its job still calls the API";
  o.runners.clear();
  EXPECT_EQ(subjects(plan(o), action_kind::delete_object),
            (names{"Role/octorun-runner-linux", "RoleBinding/octorun-runner-linux"}));
  o.deleted_objects = {"Role/octorun-runner-linux", "RoleBinding/octorun-runner-linux"};
  o.applied_objects.erase("Role/octorun-runner-linux");
  o.applied_objects.erase("RoleBinding/octorun-runner-linux");
  EXPECT_FALSE(has(plan(o), action_kind::delete_object));
}

TEST(RunnerSetPlan, AStaleHooksRoleIsLookedForOnlyUnderASpecNotYetReconciled) {
  auto o = ready_set();
  EXPECT_FALSE(has(plan(o), action_kind::delete_object)) << "a DELETE per set per restart";
  o.set->metadata.generation = 3;
  o.set->status.observed_generation = 2;  // changed while the manager was away
  EXPECT_EQ(subjects(plan(o), action_kind::delete_object),
            (names{"Role/octorun-runner-linux", "RoleBinding/octorun-runner-linux"}));
}

TEST(RunnerSetPlan, ARefusedApplyIsReportedAndRetriedLater) {
  auto o = ready_set();
  o.set->spec.pod.container_mode = model::container_mode_spec{model::container_mode::kubernetes, ""};
  o.object_errors["Role/octorun-runner-linux"] = "403 Forbidden: attempting to grant RBAC permissions";
  o.objects_retry_at = t0 + 30s;
  demand(o, 1);
  auto p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::apply_object), (names{"RoleBinding/octorun-runner-linux"}));
  EXPECT_EQ(creates(p), 0) << "runners whose jobs could not start their containers";
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("type":"PodConfigReady","status":"False","reason":"ApplyFailed",)"
                                R"("message":"Role/octorun-runner-linux: 403 Forbidden)"),
            std::string::npos)
      << status[0].text;
  o.now = t0 + 30s;
  EXPECT_EQ(subjects(plan(o), action_kind::apply_object),
            (names{"Role/octorun-runner-linux", "RoleBinding/octorun-runner-linux"}));
}

TEST(RunnerSetPlan, AnInvalidPodConfigurationCreatesNoRunnersAndSaysWhichField) {
  auto o = ready_set();
  o.set->spec.pod.proxy = model::proxy_spec{model::proxy_endpoint{"proxy.corp:3128", ""}, std::nullopt, {}};
  demand(o, 1);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 0);
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(
      status[0].text.find(R"("reason":"InvalidSpec","message":"spec.proxy.http.url: \"proxy.corp:3128\" )"
                          R"(must start with http:// or https://")"),
      std::string::npos)
      << status[0].text;
}

TEST(RunnerSetPlan, ReferencesAreCheckedAndAProblemIsReportedWithoutStoppingRunners) {
  auto o = ready_set();
  o.set->spec.pod.ca_bundle =
      model::ca_bundle_ref{model::ca_bundle_ref::source::config_map, "corp-ca", "ca.crt"};
  demand(o, 1);
  auto p = plan(o);
  auto checks = of(p, action_kind::check_reference);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].subject, "ConfigMap/corp-ca");
  ASSERT_TRUE(checks[0].ref);
  EXPECT_EQ(checks[0].ref->field, "spec.caBundle.configMapKeyRef");
  // Its pods start once the ConfigMap exists: runners are made meanwhile.
  o.reference_problems["ConfigMap/corp-ca"] =
      "spec.caBundle.configMapKeyRef: ConfigMap \"corp-ca\" not found";
  o.references_checked_at = t0;
  p = plan(o);
  EXPECT_EQ(creates(p), 1);
  EXPECT_FALSE(has(p, action_kind::check_reference)) << "checked again before reference_recheck";
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("reason":"ReferenceInvalid","message":"spec.caBundle.configMapKeyRef: )"),
            std::string::npos)
      << status[0].text;
  o.now = t0 + 30s;
  EXPECT_TRUE(has(plan(o), action_kind::check_reference));
  // Once it fits, it is looked at ten times as seldom.
  o.reference_problems["ConfigMap/corp-ca"] = "";
  EXPECT_FALSE(has(plan(o), action_kind::check_reference));
  o.now = t0 + 300s;
  EXPECT_TRUE(has(plan(o), action_kind::check_reference));
}

TEST(RunnerSetPlan, DeletionDeletesThePerSetObjectsLast) {
  auto o = deleting_set();
  o.deleted_objects.clear();
  o.no_runners_confirmed = true;
  o.deleted_scale_sets = {7};
  auto p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::delete_object),
            (names{"Role/octorun-runner-linux", "RoleBinding/octorun-runner-linux",
                   "ServiceAccount/octorun-runner-linux", "PodDisruptionBudget/octorun-busy-linux"}));
  EXPECT_FALSE(has(p, action_kind::patch_finalizer));
  for (const auto& key : pod_resource_keys("linux")) o.deleted_objects.insert(key);
  // One the manager may not delete is left to the garbage collector (owner reference).
  o.deleted_objects.erase("PodDisruptionBudget/octorun-busy-linux");
  o.object_errors["PodDisruptionBudget/octorun-busy-linux"] = "403 Forbidden";
  EXPECT_TRUE(has(plan(o), action_kind::patch_finalizer));
  // While runners remain, none of them goes.
  add_runner(o, "linux-a", runner::phase::running, true);
  o.deleted_objects.clear();
  o.object_errors.clear();
  EXPECT_FALSE(has(plan(o), action_kind::delete_object));
}

// ---- template rollouts (rollout.hpp) ------------------------------------------------

// A set whose template changed: its runners carry the old fingerprint.
set_observation rolled_set(std::int32_t min_runners) {
  auto o = ready_set();
  o.set->spec.min_runners = min_runners;
  o.set->spec.template_.json = R"({"spec":{"containers":[{"name":"runner","image":"r:2"}]}})";
  return o;
}
const std::string old_fingerprint = "0123456789abcdef";
std::string current_fingerprint(const set_observation& o) {
  return model::pod_fingerprint(o.set->spec.template_, o.set->spec.pod);
}

TEST(RunnerSetPlan, ARolloutReplacesIdleOutdatedRunnersInStepsAndNeverABusyOne) {
  auto o = rolled_set(4);
  add_runner(o, "linux-a", runner::phase::pending, true).pod_fingerprint = old_fingerprint;
  add_runner(o, "linux-b", runner::phase::pending, false).pod_fingerprint = old_fingerprint;
  add_runner(o, "linux-c", runner::phase::running, true).pod_fingerprint = old_fingerprint;
  add_runner(o, "linux-d", runner::phase::pending, true).pod_fingerprint = current_fingerprint(o);
  auto p = plan(o);
  // A quarter of 4: one at a time, the one not online yet first.
  EXPECT_EQ(subjects(p, action_kind::remove_idle_runner), (names{"linux-b"}));
  EXPECT_EQ(creates(p), 0) << "the replaced runner holds its place until its removal is answered";
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("outdatedRunners":3)"), std::string::npos) << status[0].text;

  // Its removal answered (deleting): a current runner takes its place, and
  // the step is still in use until it is gone.
  o.runners["linux-b"].view.deleting = true;
  p = plan(o);
  EXPECT_EQ(creates(p), 1);
  EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty());
  o.runners.erase("linux-b");
  p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::remove_idle_runner), (names{"linux-a"}));
  // The busy one finishes on its old template; once finished it is deleted, not replaced in place.
  o.runners.erase("linux-a");
  add_runner(o, "linux-e", runner::phase::pending, true).pod_fingerprint = current_fingerprint(o);
  p = plan(o);
  EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty()) << "linux-c is busy";
  status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("outdatedRunners":1)"), std::string::npos) << status[0].text;
}

TEST(RunnerSetPlan, NoRolloutWhileTheRunnerCrdDropsFieldsOfTheSpec) {
  auto o = rolled_set(2);
  add_runner(o, "linux-a", runner::phase::pending, true).pod_fingerprint = old_fingerprint;
  o.runner_crd_problem = "the Runner CRD is older than the manager";
  auto p = plan(o);
  EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty()) << "every new runner would be outdated too";
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("reason":"RunnerCRDOutdated")"), std::string::npos) << status[0].text;
}

TEST(RunnerSetPlan, AnUnchangedSetHasNoOutdatedRunners) {
  auto o = rolled_set(2);
  add_runner(o, "linux-a", runner::phase::pending, true).pod_fingerprint = current_fingerprint(o);
  add_runner(o, "linux-b", runner::phase::pending, true);  // fingerprint unknown
  auto p = plan(o);
  EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty());
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("outdatedRunners":0)"), std::string::npos) << status[0].text;
}

TEST(RunnerSetPlan, ScaleDownTakesOutdatedRunnersBeforeCurrentOnes) {
  auto o = rolled_set(0);
  add_runner(o, "linux-a", runner::phase::pending, true).pod_fingerprint = current_fingerprint(o);
  add_runner(o, "linux-b", runner::phase::pending, true).pod_fingerprint = old_fingerprint;
  add_runner(o, "linux-c", runner::phase::pending, true).pod_fingerprint = current_fingerprint(o);
  demand(o, 2);
  // One too many: the outdated one goes (as a scale-down, or as the rollout's step).
  EXPECT_EQ(subjects(plan(o), action_kind::remove_idle_runner), (names{"linux-b"}));
}

TEST(RunnerSetPlan, AVariantsOwnContainerModeChangesOnlyItsRunners) {
  auto o = rolled_set(0);
  o.set->spec.variants = {model::variant_spec{"a", {"a"}, {}, {}, {}},
                          model::variant_spec{"b", {"b"}, {}, {}, {}}};
  auto before = model::effective_variants(o.set->spec);
  add_runner(o, "linux-a-x", runner::phase::pending, true, "a").pod_fingerprint =
      model::pod_fingerprint(*before[0].template_, before[0].pod);
  add_runner(o, "linux-b-x", runner::phase::pending, true, "b").pod_fingerprint =
      model::pod_fingerprint(*before[1].template_, before[1].pod);
  demand(o, 1, "a");
  demand(o, 1, "b");
  EXPECT_TRUE(of(plan(o), action_kind::remove_idle_runner).empty());
  o.set->spec.variants[1].container_mode = model::container_mode_spec{model::container_mode::dind, ""};
  EXPECT_EQ(subjects(plan(o), action_kind::remove_idle_runner), (names{"linux-b-x"}));
}

TEST(RunnerSetPlan, PlanningTwiceYieldsTheSameActions) {
  auto o = listener_set();
  registered(o, 3);
  add_runner(o, "linux-a", runner::phase::succeeded, false);
  auto a = plan(o), b = plan(o);
  ASSERT_EQ(a.actions.size(), b.actions.size());
  for (std::size_t i = 0; i < a.actions.size(); ++i) {
    EXPECT_EQ(a.actions[i].kind, b.actions[i].kind);
    EXPECT_EQ(a.actions[i].subject, b.actions[i].subject);
  }
}

}  // namespace
}  // namespace octorun::runnerset
