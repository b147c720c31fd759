// The RunnerSet's side of the runner version (runnerset/runner_versions.hpp):
// plan() fetches GitHub's latest release now and then, says each variant's
// health in RunnerVersionCurrent, and makes no new runners of a template
// whose runner exited as deprecated until the template changes; the Events
// mark each transition once; the metrics families; a pod whose termination
// message says "deprecated" makes its Runner Outdated whatever its exit code.
#include <gtest/gtest.h>

#include "actors/metrics/manager_metrics.hpp"
#include "actors/runner/observe.hpp"
#include "actors/runnerset/set_events.hpp"
#include "common/json_parse.hpp"
#include "common/rfc3339.hpp"
#include "model/parse.hpp"
#include "model/pod_config.hpp"
#include "test/manager/runnerset_plan_fixtures.hpp"

namespace octorun::runnerset {
namespace {

using namespace plan_fixtures;

constexpr std::int64_t day = 24 * 3600;
constexpr std::int64_t wall = 1'780'000'000;

// A webhook set running `image`, GitHub's latest release v2.331.0 published
// `age` seconds ago, two jobs waiting.
set_observation versioned_set(const std::string& image, std::int64_t age = day) {
  auto o = ready_set();
  o.set->spec.template_.containers = {{"runner", image}};
  o.set->spec.template_.json = R"({"spec":{"containers":[{"name":"runner","image":")" + image + R"("}]}})";
  o.wall_time = format_rfc3339(wall);
  o.latest_runner_release = model::runner_release{{2, 331, 0}, wall - age};
  o.runner_release_due = o.now + 1h;
  plan_fixtures::demand(o, 2);
  return o;
}

std::uint64_t fingerprint_of(const set_observation& o) {
  return model::pod_fingerprint(o.set->spec.template_, o.set->spec.pod);
}

model::condition version_condition(const set_plan& p) {
  auto status = of(p, action_kind::publish_status);
  EXPECT_EQ(status.size(), 1u);
  for (const auto& c : status.empty() ? std::vector<model::condition>{} : status[0].conditions)
    if (c.type == "RunnerVersionCurrent") return c;
  ADD_FAILURE() << "no RunnerVersionCurrent condition";
  return {};
}

TEST(RunnerVersionPlan, TheLatestReleaseIsFetchedWhenDueAndOnceAtATime) {
  auto o = versioned_set("ghcr.io/actions/actions-runner:2.331.0");
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::fetch_runner_release));
  EXPECT_EQ(subjects(p, action_kind::wake), (names{std::string(release_wake)}));
  o.now = o.runner_release_due;
  EXPECT_TRUE(has(plan(o), action_kind::fetch_runner_release));
  o.in_flight.insert({action_kind::fetch_runner_release, ""});
  EXPECT_FALSE(has(plan(o), action_kind::fetch_runner_release));
  // Not before the credentials load (the call goes on them).
  auto unloaded = versioned_set("ghcr.io/actions/actions-runner:2.331.0");
  unloaded.credentials_loaded = false;
  unloaded.now = unloaded.runner_release_due;
  EXPECT_FALSE(has(plan(unloaded), action_kind::fetch_runner_release));
}

TEST(RunnerVersionPlan, TheConditionSaysEachHealthAndRunnersAreStillMade) {
  struct want {
    std::string image;
    std::int64_t age;
    std::string status, reason;
  };
  for (const auto& w : std::vector<want>{
           {"ghcr.io/actions/actions-runner:2.331.0", day, "True", "Current"},
           {"ghcr.io/actions/actions-runner:2.330.0", day, "True", "UpdateAvailable"},
           {"ghcr.io/actions/actions-runner:2.330.0", 25 * day, "False", "UpdateWindowEnding"},
           {"ghcr.io/actions/actions-runner:2.330.0", 31 * day, "False", "UpdateWindowPassed"},
           {"ghcr.io/actions/actions-runner:2.300.0", day, "False", "BelowMinimum"},
           {"ghcr.io/actions/actions-runner:latest", day, "Unknown", "VersionUnknown"},
       }) {
    auto p = plan(versioned_set(w.image, w.age));
    auto c = version_condition(p);
    EXPECT_EQ(c.status, w.status) << w.image << " " << w.age;
    EXPECT_EQ(c.reason, w.reason) << w.image << " " << w.age;
    EXPECT_EQ(c.observed_generation, 0);
    EXPECT_EQ(creates(p), 2) << "only a deprecated exit stops new runners: " << c.reason;
    ASSERT_EQ(p.versions.size(), 1u);
  }
}

TEST(RunnerVersionPlan, ADeprecatedExitStopsNewRunnersOfThatTemplateUntilItChanges) {
  auto o = versioned_set("ghcr.io/actions/actions-runner:2.330.0");
  add_runner(o, "linux-old", model::runner_phase::outdated, false).pod_fingerprint = fingerprint_of(o);
  o.deprecated_exits[""] = deprecated_exit{fingerprint_of(o), model::runner_version{2, 330, 0}};
  auto p = plan(o);
  EXPECT_EQ(creates(p), 0) << "another runner of this template would exit the same way";
  EXPECT_TRUE(of(p, action_kind::delete_runner).empty()) << "the exited one stays as the record of why";
  auto c = version_condition(p);
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "RunnerDeprecated");
  EXPECT_NE(c.message.find("v2.331.0"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("template"), std::string::npos) << c.message;
  // A restarted manager knows it from the Runner it kept.
  auto restarted = o;
  restarted.deprecated_exits.clear();
  EXPECT_EQ(creates(plan(restarted)), 0);
  EXPECT_EQ(version_condition(plan(restarted)).reason, "RunnerDeprecated");
  // Only the newest exited Runner of the template is kept.
  auto twice = o;
  add_runner(twice, "linux-older", model::runner_phase::outdated, false).pod_fingerprint = fingerprint_of(o);
  twice.runners["linux-old"].view.created = 200;
  twice.runners["linux-older"].view.created = 100;
  EXPECT_EQ(subjects(plan(twice), action_kind::delete_runner), (names{"linux-older"}));
  // Still blocked from memory if someone deletes that Runner.
  o.runners.clear();
  EXPECT_EQ(creates(plan(o)), 0);
  add_runner(o, "linux-old", model::runner_phase::outdated, false).pod_fingerprint = fingerprint_of(o);
  // The template changes (a newer image): runners again, nothing else needed.
  o.set->spec.template_.containers = {{"runner", "ghcr.io/actions/actions-runner:2.331.0"}};
  o.set->spec.template_.json =
      R"({"spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.331.0"}]}})";
  p = plan(o);
  EXPECT_EQ(creates(p), 2);
  EXPECT_EQ(subjects(p, action_kind::delete_runner), (names{"linux-old"}))
      << "the record goes with its template";
  EXPECT_EQ(version_condition(p).reason, "Current");
}

TEST(RunnerVersionPlan, ADeprecatedExitStopsOnlyItsOwnVariant) {
  auto o = versioned_set("ghcr.io/actions/actions-runner:2.330.0");
  o.active_jobs.clear();
  model::variant_spec small, large;
  small.name = "small";
  large.name = "large";
  o.set->spec.variants = {small, large};
  plan_fixtures::demand(o, 1, "small");
  plan_fixtures::demand(o, 1, "large");
  o.deprecated_exits["large"] = deprecated_exit{fingerprint_of(o), std::nullopt};
  o.deprecated_exits["small"] = deprecated_exit{fingerprint_of(o) + 1, std::nullopt};  // an older template's
  auto p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::create_runners), (names{"small"}));
  auto c = version_condition(p);
  EXPECT_EQ(c.reason, "RunnerDeprecated");
  EXPECT_NE(c.message.find("variant large"), std::string::npos) << c.message;
}

// The runner version's Events among a transition's.
std::vector<set_event> version_events(const set_summary& before, const set_summary& after) {
  std::vector<set_event> out;
  for (auto& e : set_events(before, after, "gh"))
    if (e.action == "CheckRunnerVersion") out.push_back(std::move(e));
  return out;
}

TEST(RunnerVersionEvents, OneEventPerTransitionAndNoneAfterARestart) {
  auto o = versioned_set("ghcr.io/actions/actions-runner:2.330.0", 25 * day);
  auto p = plan(o);
  set_summary before;
  auto after = summarize(before, o, p);
  auto events = version_events(before, after);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].warning);
  EXPECT_EQ(events[0].reason, "UpdateWindowEnding");
  EXPECT_EQ(events[0].action, "CheckRunnerVersion");
  // The same verdict again: nothing.
  EXPECT_TRUE(version_events(after, summarize(after, o, plan(o))).empty());
  // A restarted manager reads it from the status it published.
  auto published = *o.set;
  published.status.conditions = {version_condition(p)};
  auto restarted = summary_from_status(published);
  EXPECT_TRUE(version_events(restarted, summarize(restarted, o, plan(o))).empty());
  // A deprecated exit: a Warning of its own; the template changed: Normal.
  o.deprecated_exits[""] = deprecated_exit{fingerprint_of(o), std::nullopt};
  auto blocked = summarize(after, o, plan(o));
  events = version_events(after, blocked);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "RunnerDeprecated");
  EXPECT_TRUE(events[0].warning);
  o.set->spec.template_.containers = {{"runner", "ghcr.io/actions/actions-runner:2.331.0"}};
  o.set->spec.template_.json = "{}";
  events = version_events(blocked, summarize(blocked, o, plan(o)));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "RunnerVersionAccepted");
  EXPECT_FALSE(events[0].warning);
}

TEST(RunnerVersionPod, ATerminationMessageSayingDeprecatedMakesTheRunnerOutdated) {
  auto pod_with = [](int exit_code, const std::string& message) {
    auto d =
        json::parse(R"({"metadata":{"name":"linux-a"},"status":{"phase":"Succeeded","containerStatuses":[)"
                    R"({"name":"runner","state":{"terminated":{"exitCode":)" +
                        std::to_string(exit_code) + R"(,"message":")" + message + R"("}}}]}})",
                    json::sources::stored_json);
    EXPECT_TRUE(d.has_value());
    return model::read_runner_pod(*d);
  };
  const std::string said =
      "An error occurred: Runner version v2.320.0 is deprecated and cannot receive messages.";
  auto pod = pod_with(0, said);  // run.sh exits 0 after it
  ASSERT_EQ(pod.containers.size(), 1u);
  EXPECT_TRUE(pod.containers[0].deprecated);
  EXPECT_EQ(pod.containers[0].reported_version, (model::runner_version{2, 320, 0}));
  auto seen = runner::observe_pod(&pod);
  EXPECT_EQ(seen.exit_code, runner::outdated_exit_code);
  EXPECT_EQ(runner::controller_phase({model::runner_phase::pending, false, false}, seen),
            model::runner_phase::outdated);
  // Anything else keeps its exit code.
  auto other = pod_with(0, "Runner version vX is deprecated");
  EXPECT_FALSE(other.containers[0].deprecated);
  EXPECT_EQ(runner::observe_pod(&other).exit_code, 0);
}

TEST(RunnerVersionMetrics, EachVariantsVersionHealthAndDeadlineAndTheirEnd) {
  auto m = metrics::manager_metrics::make({"replica-0", "1.2.3", "abc1234"});
  model::version_verdict v;
  v.health = model::version_health::window_ending;
  v.running = model::runner_version{2, 330, 0};
  v.update_deadline = wall + 5 * day;
  m->runner_version("ci", "linux", "large", &v);
  auto text = m->scrape();
  const std::string l = R"(namespace="ci",runnerset="linux",variant="large")";
  EXPECT_NE(text.find("octorun_runner_version_info{" + l + R"(,version="2.330.0"} 1)"), std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(octorun_runner_version_health{health="window_ending",)" + l + "} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(octorun_runner_version_health{health="current",)" + l + "} 0"), std::string::npos);
  EXPECT_NE(text.find("octorun_runner_version_update_deadline_timestamp_seconds{" + l + "} "),
            std::string::npos);
  // A new image: the old version's series goes, no deadline any more.
  v.health = model::version_health::current;
  v.running = model::runner_version{2, 331, 0};
  v.update_deadline = 0;
  m->runner_version("ci", "linux", "large", &v);
  text = m->scrape();
  EXPECT_EQ(text.find(R"(version="2.330.0")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(version="2.331.0"} 1)"), std::string::npos) << text;
  EXPECT_EQ(text.find("octorun_runner_version_update_deadline_timestamp_seconds{"), std::string::npos)
      << text;
  // The variant is gone: every series of it goes.
  m->runner_version("ci", "linux", "large", nullptr);
  text = m->scrape();
  EXPECT_EQ(text.find(l), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE octorun_runner_version_health gauge"), std::string::npos);
}

}  // namespace
}  // namespace octorun::runnerset
