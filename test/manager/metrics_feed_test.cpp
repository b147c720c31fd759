// The state metrics fed from informer events (actors/metrics/metrics_feed.hpp):
// records per object, per-variant counts as the RunnerSet's status says them,
// deletions, and the feed actor publishing to the collector.
#include "actors/metrics/metrics_feed.hpp"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <chrono>
#include <sstream>
#include <variant>

#include "common/json.hpp"
#include "test/support/poll.hpp"

namespace octorun::metrics {
namespace {

using namespace std::chrono_literals;

// What the controller's typed informers deliver for the object `text`: a
// RunnerSet or a Runner event, or nothing (another kind, which the feed is
// never sent, or an object the informer's decoder cannot read).
using delivered = std::variant<std::monostate, watched::runnerset_event, watched::runner_event>;

delivered event(const std::string& text, kube::event_type type = kube::event_type::added) {
  auto obj = kube::parse_object(text);
  EXPECT_TRUE(obj) << obj.error();
  if (!obj) return {};
  const auto kind = json::str(*obj->doc, "kind");
  if (kind == "RunnerSet")
    if (auto set = watched::read_runnerset(*obj)) return watched::runnerset_event{"test", type, set};
  if (kind == "Runner")
    if (auto runner = watched::read_runner(*obj)) return watched::runner_event{"test", type, runner};
  return {};
}

// Applies what was delivered; false when nothing was (nothing changed).
bool feed(state_store& store, const delivered& d) {
  if (const auto* set = std::get_if<watched::runnerset_event>(&d)) return store.apply(*set);
  if (const auto* runner = std::get_if<watched::runner_event>(&d)) return store.apply(*runner);
  return false;
}

void send(const watched::observer& feed, delivered d) {
  if (auto* set = std::get_if<watched::runnerset_event>(&d)) caf::anon_send(feed, std::move(*set));
  if (auto* runner = std::get_if<watched::runner_event>(&d)) caf::anon_send(feed, std::move(*runner));
}

std::string runnerset_json(const std::string& variants = "", const std::string& status = "") {
  return R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":"linux","namespace":"ci"},)"
         R"("spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"github","runnerLabels":["linux"],)"
         R"("minRunners":1,"maxRunners":4,)" +
         variants + R"("template":{"spec":{"containers":[{"name":"runner","image":"r"}]}}},"status":{)" +
         status + "}}";
}

std::string runner_json(const std::string& name, const std::string& phase, bool ready,
                        const std::string& variant = "") {
  return R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":")" + name +
         R"(","namespace":"ci","labels":{"octorun.io/runnerset":"linux"}},"spec":{"scopeURL":"https://github.com/acme",)"
         R"("credentialsSecretName":"github","runnerSetName":"linux","variant":")" +
         variant +
         R"(","template":{"spec":{"containers":[{"name":"runner","image":"r"}]}}},"status":{"phase":")" +
         phase + R"(","podReady":)" + (ready ? "true" : "false") + R"(,"runnerId":12}})";
}

std::string scrape(const state_collector& c) {
  prometheus::TextSerializer ser;
  std::ostringstream os;
  ser.Serialize(os, c.Collect());
  return os.str();
}

// The status is the one source of the counts: the Runners the store holds
// (here, ones the status does not count yet) never change them, so a
// dashboard and `kubectl get runnersets` agree, also during scale-down.
TEST(MetricsFeed, CountsAreWhatTheRunnerSetsStatusSays) {
  state_store store;
  EXPECT_TRUE(feed(
      store, event(runnerset_json(R"("replicas":2,)",
                                  R"("desiredReplicas":3,"replicas":4,"pendingRunners":1,"idleRunners":1,)"
                                  R"("runningRunners":2,"failedRunners":1,"assignedJobs":2)"))));
  EXPECT_TRUE(feed(store, event(runner_json("linux-aaaaa", "Pending", false))));
  EXPECT_TRUE(feed(store, event(runner_json("linux-bbbbb", "Pending", true))));
  EXPECT_TRUE(feed(store, event(runner_json("linux-ccccc", "Running", true))));
  EXPECT_TRUE(feed(store, event(runner_json("linux-ddddd", "", false))));
  EXPECT_TRUE(feed(store, event(runner_json("linux-eeeee", "Succeeded", false))));
  auto snap = store.snapshot();
  ASSERT_EQ(snap.runners.size(), 5u);
  const auto& r = snap.runners.at({"ci", "linux-ccccc"});
  EXPECT_EQ(r.runnerset, "linux");
  EXPECT_EQ(r.phase, model::runner_phase::running);
  EXPECT_EQ(r.github_runner_id, 12);
  const auto& set = snap.runnersets.at({"ci", "linux"});
  EXPECT_EQ(set.replicas, 2);
  ASSERT_EQ(set.variants.size(), 1u);
  const auto& v = set.variants[0];
  EXPECT_EQ(v.desired, 3);
  EXPECT_EQ(v.assigned_jobs, 2);
  EXPECT_EQ(v.min_runners, 1);
  EXPECT_EQ(v.max_runners, 4);
  EXPECT_EQ(v.starting, 1);
  EXPECT_EQ(v.idle, 1);
  EXPECT_EQ(v.running, 2);
  EXPECT_EQ(v.failed, 1);
}

TEST(MetricsFeed, AStatusWithoutCountsYetCountsZero) {
  state_store store;
  feed(store, event(runnerset_json()));
  feed(store, event(runner_json("linux-ccccc", "Running", true)));
  const auto snapshot = store.snapshot();  // kept: v refers into it
  const auto& v = snapshot.runnersets.at({"ci", "linux"}).variants.at(0);
  EXPECT_EQ(v.running, 0);
  EXPECT_EQ(v.desired, 0);
}

TEST(MetricsFeed, VariantsAreCountedApartWithTheirStatus) {
  state_store store;
  feed(store, event(runnerset_json(R"("variants":[{"name":"small"},{"name":"large","maxRunners":2}],)",
                                   R"("variants":[{"name":"large","desiredReplicas":2,"runningRunners":1},)"
                                   R"({"name":"small","failedRunners":1},)"
                                   R"({"name":"retired","idleRunners":1}])")));
  auto set = store.snapshot().runnersets.at({"ci", "linux"});
  ASSERT_EQ(set.variants.size(), 3u);
  EXPECT_EQ(set.variants[0].variant, "small");
  EXPECT_EQ(set.variants[0].failed, 1);
  EXPECT_EQ(set.variants[0].desired, 0);
  EXPECT_EQ(set.variants[1].variant, "large");
  EXPECT_EQ(set.variants[1].running, 1);
  EXPECT_EQ(set.variants[1].desired, 2);
  EXPECT_EQ(set.variants[1].max_runners, 2);
  // Removed from the spec, still draining: the status lists it.
  EXPECT_EQ(set.variants[2].variant, "retired");
  EXPECT_EQ(set.variants[2].idle, 1);
  EXPECT_EQ(set.variants[2].max_runners, 0);
}

TEST(MetricsFeed, DeletionsAndOtherKindsAreHandled) {
  state_store store;
  feed(store, event(runner_json("linux-aaaaa", "Pending", true)));
  EXPECT_FALSE(
      feed(store, event(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ci"}})")));
  EXPECT_FALSE(
      feed(store, event(R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":"x",)"
                        R"("namespace":"ci"},"spec":"not an object"})")));
  EXPECT_TRUE(feed(store, event(runner_json("linux-aaaaa", "Pending", true), kube::event_type::deleted)));
  EXPECT_FALSE(feed(store, event(runner_json("linux-aaaaa", "Pending", true), kube::event_type::deleted)));
  EXPECT_TRUE(store.snapshot().runners.empty());
}

TEST(MetricsFeed, TheActorPublishesWhatItWasFed) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto collector = std::make_shared<state_collector>();
  auto feed = spawn_metrics_feed(sys, collector, {std::chrono::milliseconds(10)});
  send(feed, event(runnerset_json("", R"("replicas":1,"runningRunners":1)")));
  send(feed, event(runner_json("linux-aaaaa", "Running", true)));
  const std::string want =
      R"(octorun_runnerset_runners{namespace="ci",runnerset="linux",variant="",state="running"} 1)";
  // The feed publishes from its own thread; its collector offers nothing to wait on.
  auto text = test::poll([&] { return scrape(*collector); },
                         [&](const std::string& t) { return t.find(want) != std::string::npos; }, 10s)
                  .last;
  EXPECT_NE(text.find(want), std::string::npos) << text;
  caf::anon_send_exit(feed, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace octorun::metrics
