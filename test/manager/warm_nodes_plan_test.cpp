// Warm nodes in the RunnerSet's plan (warm_nodes.hpp, plan_warm_nodes): the
// PodTemplate shaped like a variant's runner and the CapacityBuffer asking
// for chunks of it, applied in that order when their bodies change, deleted
// when no longer wanted (the buffer first); what the cluster does not serve
// is said in WarmNodesReady and tried again later; what the actor notes of
// its pods' waits for a node. No actor, no I/O.
#include <gtest/gtest.h>

#include "actors/runnerset/set_events.hpp"
#include "actors/runnerset/warm_nodes.hpp"
#include "common/json_parse.hpp"
#include "model/naming.hpp"
#include "test/manager/runnerset_plan_fixtures.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;
using namespace plan_fixtures;

constexpr const char* runner_template = R"({"metadata":{"labels":{"team":"a"}},"spec":{
  "containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0",
    "env":[{"name":"SECRET_TOKEN","value":"x"}],"resources":{"requests":{"cpu":"3","memory":"6Gi"}}}],
  "nodeSelector":{"pool":"runners"},"tolerations":[{"key":"ci","operator":"Exists"}],
  "priorityClassName":"ci","volumes":[{"name":"work","emptyDir":{}}]}})";

const std::string template_key = "PodTemplate/octorun-warm-linux";
const std::string buffer_key = "CapacityBuffer/octorun-warm-linux";

// A webhook set with a 5 s target whose runners come online in 80 s, pods
// that waited 60 s for a node, and 12 jobs in the last minute: a rate of
// 0.1 a second, so 11 chunks (Poisson(0.1 * 60) at 95 % is 10, plus one).
set_observation targeted(std::int32_t max_runners = 100) {
  auto o = ready_set();
  o.set->metadata.uid = "set-uid";
  o.set->metadata.namespace_ = "team-a";
  o.set->spec.template_.json = runner_template;
  o.set->spec.max_runners = max_runners;
  o.set->spec.start_time_target = model::start_time_target_spec{5};
  for (const auto& obj : desired_pod_resources(*o.set)) o.applied_objects[obj.key] = obj.body;
  for (int i = 0; i < 5; ++i) o.online_startups[""].add(80, {}, o.now);
  for (int i = 0; i < 5; ++i) o.node_startups[""].add(60);
  for (int i = 0; i < 12; ++i) o.job_arrivals[""].add_arrival(i, o.now - 60s + i * 1s);
  return o;
}

// Records what the actor would on success.
void answer(set_observation& o, const set_plan& p) {
  for (const auto& a : of(p, action_kind::apply_warm_nodes)) o.warm_nodes.applied[a.subject] = a.text;
  for (const auto& a : of(p, action_kind::delete_warm_nodes)) {
    o.warm_nodes.applied.erase(a.subject);
    o.warm_nodes.deleted.insert(a.subject);
  }
}

const action* applying(const set_plan& p, const std::string& key) {
  for (const auto& a : p.actions)
    if (a.kind == action_kind::apply_warm_nodes && a.subject == key) return &a;
  return nullptr;
}
// The action points into the plan: never into a temporary one.
const action* applying(set_plan&& p, const std::string& key) = delete;

TEST(WarmNodesPlan, TheTemplateIsTheRunnersShapeAndNothingElse) {
  auto o = targeted();
  const auto v = model::effective_variants(o.set->spec).front();
  auto text = warm_template_json(*o.set, v);
  ASSERT_TRUE(text) << text.error();
  auto d = json::parse(*text, json::sources::stored_json);
  ASSERT_TRUE(d);
  EXPECT_STREQ((*d)["kind"].GetString(), "PodTemplate");
  EXPECT_STREQ((*d)["metadata"]["name"].GetString(), "octorun-warm-linux");
  EXPECT_STREQ((*d)["metadata"]["ownerReferences"][0]["kind"].GetString(), "RunnerSet");
  EXPECT_STREQ((*d)["metadata"]["ownerReferences"][0]["uid"].GetString(), "set-uid");
  const auto& spec = (*d)["template"]["spec"];
  EXPECT_STREQ(spec["containers"][0]["resources"]["requests"]["cpu"].GetString(), "3");
  EXPECT_STREQ(spec["containers"][0]["image"].GetString(), "ghcr.io/actions/actions-runner:2.330.0");
  EXPECT_STREQ(spec["nodeSelector"]["pool"].GetString(), "runners");
  EXPECT_STREQ(spec["tolerations"][0]["key"].GetString(), "ci");
  EXPECT_STREQ(spec["priorityClassName"].GetString(), "ci");
  EXPECT_STREQ((*d)["template"]["metadata"]["labels"]["team"].GetString(), "a");
  EXPECT_FALSE((*d)["template"]["metadata"]["labels"].HasMember(model::label_runner));
  for (const char* gone : {"SECRET_TOKEN", "volumes", "env", "ACTIONS_RUNNER_INPUT_JITCONFIG"})
    EXPECT_EQ(text->find(gone), std::string::npos) << gone << " in " << *text;

  auto buffer = json::parse(capacity_buffer_json(*o.set, v, 3), json::sources::stored_json);
  ASSERT_TRUE(buffer);
  EXPECT_STREQ((*buffer)["apiVersion"].GetString(), "autoscaling.x-k8s.io/v1beta1");
  EXPECT_STREQ((*buffer)["spec"]["podTemplateRef"]["name"].GetString(), "octorun-warm-linux");
  EXPECT_EQ((*buffer)["spec"]["replicas"].GetInt(), 3);
  EXPECT_STREQ((*buffer)["metadata"]["ownerReferences"][0]["name"].GetString(), "linux");

  model::runnerset_spec with_variant = o.set->spec;
  model::variant_spec gpu;
  gpu.name = "gpu";
  with_variant.variants = {gpu};
  EXPECT_EQ(warm_nodes_name("linux", "gpu"), "octorun-warm-linux-gpu");
  EXPECT_EQ(capacity_buffer_key("linux", "gpu"), "CapacityBuffer/octorun-warm-linux-gpu");
}

TEST(WarmNodesPlan, TheShapeFirstThenTheBufferThenNothing) {
  auto o = targeted();
  auto p = plan(o);
  EXPECT_TRUE(applying(p, template_key));
  EXPECT_FALSE(applying(p, buffer_key)) << "a buffer never points at a template that is not there";
  auto c = published_condition(p, "WarmNodesReady");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "Unknown");
  answer(o, p);

  p = plan(o);
  const auto* buffer = applying(p, buffer_key);
  ASSERT_TRUE(buffer);
  EXPECT_NE(buffer->text.find(R"("replicas":11)"), std::string::npos) << buffer->text;
  answer(o, p);

  p = plan(o);
  EXPECT_FALSE(has(p, action_kind::apply_warm_nodes)) << "level-triggered: nothing changed, nothing sent";
  c = published_condition(p, "WarmNodesReady");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "True");
  EXPECT_EQ(c->reason, "Requested");
  EXPECT_NE(c->message.find("CapacityBuffer octorun-warm-linux asks for 11 chunks"), std::string::npos)
      << c->message;
  EXPECT_NE(published_status(p).find(R"("nodeStartupP95Seconds":60,"warmNodes":11})"), std::string::npos)
      << published_status(p);
}

TEST(WarmNodesPlan, WhenDemandStopsTheBufferAsksForNone) {
  auto o = targeted();
  answer(o, plan(o));
  answer(o, plan(o));
  o.now += 11min;
  auto p = plan(o);
  const auto* buffer = applying(p, buffer_key);
  ASSERT_TRUE(buffer);
  EXPECT_NE(buffer->text.find(R"("replicas":0)"), std::string::npos) << buffer->text;
  EXPECT_FALSE(has(p, action_kind::delete_warm_nodes)) << "kept while the target is: a peak needs one patch";
}

TEST(WarmNodesPlan, NoneBeforeAPodWaitedForANodeOrWithoutATarget) {
  auto o = targeted();
  o.node_startups.clear();
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::apply_warm_nodes));
  EXPECT_FALSE(published_condition(p, "WarmNodesReady"));
  EXPECT_EQ(published_status(p).find("warmNodes"), std::string::npos) << published_status(p);

  o = targeted();
  o.set->spec.start_time_target.reset();
  p = plan(o);
  EXPECT_FALSE(has(p, action_kind::apply_warm_nodes));
  EXPECT_FALSE(has(p, action_kind::delete_warm_nodes)) << "none made, none said: nothing to delete";
}

TEST(WarmNodesPlan, MaxRunnersLessTheRunnersBoundsTheChunks) {
  auto o = targeted(4);
  answer(o, plan(o));
  const auto p = plan(o);  // the actions applying() points into
  const auto* buffer = applying(p, buffer_key);
  ASSERT_TRUE(buffer);
  EXPECT_NE(buffer->text.find(R"("replicas":0)"), std::string::npos)
      << "the warm runners fill maxRunners: no runner could take a chunk " << buffer->text;
}

TEST(WarmNodesPlan, AnUnservedApiTurnsWarmNodesOffAndIsTriedAgainLater) {
  auto o = targeted();
  answer(o, plan(o));
  o.warm_nodes.unserved = true;
  o.warm_nodes.errors[buffer_key] = "404 Not Found";
  o.warm_nodes.retry_at = o.now + warm_nodes_unserved_retry;
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::apply_warm_nodes));
  EXPECT_FALSE(has(p, action_kind::delete_warm_nodes));
  auto c = published_condition(p, "WarmNodesReady");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "CapacityBufferUnavailable");
  EXPECT_NE(c->message.find("CapacityBuffer=true"), std::string::npos) << c->message;
  EXPECT_EQ(published_status(p).find("warmNodes"), std::string::npos)
      << "none asked: " << published_status(p);
  auto wakes = of(p, action_kind::wake);
  auto wake =
      std::find_if(wakes.begin(), wakes.end(), [](const action& a) { return a.subject == warm_nodes_wake; });
  ASSERT_NE(wake, wakes.end());
  EXPECT_EQ(wake->at, o.warm_nodes.retry_at);

  o.now = o.warm_nodes.retry_at;
  p = plan(o);
  EXPECT_TRUE(applying(p, buffer_key)) << "an API installed since is picked up";
  EXPECT_EQ(published_condition(p, "WarmNodesReady")->reason, "CapacityBufferUnavailable")
      << "until it answers";
}

TEST(WarmNodesPlan, AFailedApplyIsSaidAndWaitsForItsRetry) {
  auto o = targeted();
  answer(o, plan(o));
  o.warm_nodes.errors[buffer_key] = "403 Forbidden: capacitybuffers is forbidden";
  o.warm_nodes.retry_at = o.now + warm_nodes_retry;
  auto p = plan(o);
  EXPECT_FALSE(applying(p, buffer_key));
  auto c = published_condition(p, "WarmNodesReady");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->reason, "ApplyFailed");
  EXPECT_NE(c->message.find("403 Forbidden"), std::string::npos) << c->message;
  o.now += warm_nodes_retry;
  const auto again = plan(o);
  EXPECT_TRUE(applying(again, buffer_key));
}

// A target removed: the buffer goes first, then its template; a set that
// goes takes its buffer with it at once (its owner references would, later).
TEST(WarmNodesPlan, ATargetRemovedDeletesTheBufferThenItsShape) {
  auto o = targeted();
  answer(o, plan(o));
  answer(o, plan(o));
  o.set->spec.start_time_target.reset();
  auto p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::delete_warm_nodes), names{buffer_key});
  EXPECT_FALSE(published_condition(p, "WarmNodesReady"));
  answer(o, p);
  p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::delete_warm_nodes), names{template_key});
  answer(o, p);
  EXPECT_FALSE(has(plan(o), action_kind::delete_warm_nodes));

  o = targeted();
  answer(o, plan(o));
  answer(o, plan(o));
  o.set->metadata.deleting = true;
  EXPECT_EQ(subjects(plan(o), action_kind::delete_warm_nodes), names{buffer_key});
}

// A manager that starts finds WarmNodesReady in the status its predecessor
// wrote: the objects of a variant that no longer keeps warm nodes may exist.
TEST(WarmNodesPlan, WhatAPredecessorMadeIsDeletedWhenNoLongerWanted) {
  auto o = targeted();
  o.set->spec.start_time_target.reset();
  model::condition said;
  said.type = "WarmNodesReady";
  said.status = "True";
  o.set->status.conditions.push_back(said);
  auto p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::delete_warm_nodes), names{buffer_key});
}

TEST(WarmNodesPlan, OnlyAWaitForANodeIsANodeStartUp) {
  auto o = targeted();
  o.node_startups.clear();
  auto& fast = add_runner(o, "linux-a", model::runner_phase::pending, false);
  fast.view.created = 1000;
  auto& slow = add_runner(o, "linux-b", model::runner_phase::pending, false);
  slow.view.created = 1000;
  model::runner_pod pod;
  pod.scheduled_at = 1002;
  note_runner_scheduled(o, "linux-a", pod);
  EXPECT_TRUE(o.node_startups.empty()) << "it found room";
  pod.scheduled_at = 1061;
  note_runner_scheduled(o, "linux-b", pod);
  note_runner_scheduled(o, "linux-b", pod);
  ASSERT_EQ(o.node_startups.count(""), 1u);
  EXPECT_EQ(o.node_startups[""].seconds, std::deque<std::int64_t>{61}) << "once per runner";
  pod.scheduled_at = 0;  // not scheduled yet
  note_runner_scheduled(o, "linux-c", pod);
  EXPECT_EQ(o.node_startups[""].seconds.size(), 1u);
}

}  // namespace
}  // namespace octorun::runnerset

namespace octorun::runnerset {
namespace {

// One Warning when warm nodes turn off, none while they stay off, a Normal
// when they are asked for again; a restart repeats none (the status says).
TEST(WarmNodesPlan, AnUnservedApiIsOneWarningAndItsReturnANormalEvent) {
  auto o = targeted();
  answer(o, plan(o));
  answer(o, plan(o));
  auto before = summary_from_status(*o.set);
  auto p = plan(o);
  auto now = summarize(before, o, p);
  auto events = set_events(before, now, "github");
  EXPECT_TRUE(std::none_of(events.begin(), events.end(), [](const set_event& e) { return e.warning; }));
  before = now;

  o.warm_nodes.unserved = true;
  o.warm_nodes.retry_at = o.now + warm_nodes_unserved_retry;
  p = plan(o);
  now = summarize(before, o, p);
  events = set_events(before, now, "github");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].warning);
  EXPECT_EQ(events[0].reason, "WarmNodesCapacityBufferUnavailable");
  EXPECT_EQ(events[0].action, "KeepWarmNodes");
  EXPECT_TRUE(set_events(now, summarize(now, o, plan(o)), "github").empty()) << "a level, not a transition";
  model::condition said;
  said.type = "WarmNodesReady";
  said.status = "False";
  said.reason = "CapacityBufferUnavailable";
  o.set->status.conditions.push_back(said);
  const auto restarted = set_events(summary_from_status(*o.set), now, "github");
  EXPECT_TRUE(std::none_of(restarted.begin(), restarted.end(), [](const set_event& e) {
    return e.reason.rfind("WarmNodes", 0) == 0;
  })) << "a restart repeats nothing the status says";

  before = now;
  o.warm_nodes.unserved = false;
  o.warm_nodes.errors.clear();
  p = plan(o);
  now = summarize(before, o, p);
  events = set_events(before, now, "github");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].warning);
  EXPECT_EQ(events[0].reason, "WarmNodesRequested");
}

}  // namespace
}  // namespace octorun::runnerset
