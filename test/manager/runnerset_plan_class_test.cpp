// The RunnerSet's plan under its RunnerClass's verdict (model::judge_set):
// nothing goes to GitHub before the set is judged or while its class refuses
// it; no new runner starts while it breaks a limit; busy runners always
// finish their job.
#include <gtest/gtest.h>

#include "actors/runnerset/plan.hpp"
#include "test/manager/runnerset_plan_fixtures.hpp"

namespace octorun::runnerset {
namespace {

using namespace plan_fixtures;
using plan_fixtures::demand;

model::class_verdict refused() {
  return {.class_name = "team-web",
          .classless = false,
          .refused = {{"spec.scopeURL",
                       "\"https://sink.example/acme\" is not on a GitHub server RunnerClass "
                       "\"team-web\" allows (spec.github.servers: https://github.com)"}},
          .limits = {},
          .pod_security = {}};
}

model::class_verdict over_limits() {
  return {.class_name = "team-web",
          .classless = false,
          .refused = {},
          .limits =
              {{"spec.containerMode.type",
                "must not be dind: RunnerClass \"team-web\" allows none, kubernetes (spec.containerModes)"}},
          .pod_security = {}};
}

std::optional<model::condition> class_condition_of(const set_plan& p) {
  for (const auto& a : of(p, action_kind::publish_status))
    for (const auto& c : a.conditions)
      if (c.type == "ClassAdmitted") return c;
  return std::nullopt;
}

TEST(RunnerSetPlanClass, NothingGoesToGitHubBeforeTheSetIsJudged) {
  auto o = ready_set();
  o.class_verdict.reset();
  o.credentials_loaded = false;
  demand(o, 3);
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::read_credentials));
  EXPECT_EQ(creates(p), 0);
  EXPECT_FALSE(has(p, action_kind::publish_status)) << "no verdict to say yet";
}

TEST(RunnerSetPlanClass, ARefusedSetReadsNoCredentialsStartsNothingAndSaysWhy) {
  auto o = ready_set();
  o.class_verdict = refused();
  o.credentials_loaded = false;
  o.scale_set_client = false;
  demand(o, 3);
  add_runner(o, "linux-busy1", model::runner_phase::running, true);
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::read_credentials)) << "the credentials would go to the tenant's sink";
  EXPECT_EQ(creates(p), 0);
  EXPECT_FALSE(has(p, action_kind::remove_idle_runner));
  EXPECT_FALSE(has(p, action_kind::delete_runner)) << "a busy runner finishes its job";
  auto c = class_condition_of(p);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "Refused");
  EXPECT_NE(
      c->message.find("spec.scopeURL: \"https://sink.example/acme\" is not on a GitHub server RunnerClass "
                      "\"team-web\" allows"),
      std::string::npos)
      << c->message;
}

// A namespace no class admits is one the platform has not given the
// manager (the chart's write policy refuses its writes there too): a refused
// set's plan applies none of its pods' objects (ServiceAccount,
// PodDisruptionBudget, the kubernetes-mode RoleBinding), before or after
// it was judged, and deletes none when the set goes (the garbage collector
// takes them). Before issue 32 they were applied before the verdict.
TEST(RunnerSetPlanClass, ARefusedSetWritesNothingInItsNamespace) {
  auto o = ready_set();
  o.applied_objects.clear();
  o.set->spec.pod.container_mode.emplace().type = model::container_mode::kubernetes;
  o.hooks_cluster_role = "octorun-runner-kubernetes-mode";
  o.class_verdict.reset();
  EXPECT_FALSE(has(plan(o), action_kind::apply_object)) << "not judged yet";
  o.class_verdict = refused();
  o.credentials_loaded = false;
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::apply_object));
  EXPECT_FALSE(has(p, action_kind::delete_object));
  EXPECT_TRUE(has(p, action_kind::publish_status)) << "its status still says why";

  o.set->metadata.deleting = true;
  o.no_runners_confirmed = true;
  p = plan(o);
  EXPECT_FALSE(has(p, action_kind::delete_object));
  EXPECT_TRUE(has(p, action_kind::patch_finalizer)) << "its deletion is not held";

  o.set->metadata.deleting = false;
  o.class_verdict = model::class_verdict{
      .class_name = "team-web", .classless = false, .refused = {}, .limits = {}, .pod_security = {}};
  EXPECT_EQ(subjects(plan(o), action_kind::apply_object).size(), 3u) << "admitted: its objects are made";
}

TEST(RunnerSetPlanClass, ARefusedListenerSetStopsListening) {
  auto o = listener_set();
  registered(o, 2);
  o.class_verdict = refused();
  o.credentials_loaded = false;
  EXPECT_EQ(subjects(plan(o), action_kind::stop_listener), std::vector<std::string>{""});
}

// A class that no longer admits the set's namespace or scope, but still
// its server and credentials (model::class_verdict::drains): idle runners
// are removed from GitHub, busy and listening ones are not, nothing starts,
// nothing is written in its namespace.
TEST(RunnerSetPlanClass, ARefusedSetThatDrainsRemovesItsIdleRunnersOnly) {
  auto o = listener_set();
  registered(o, 3);
  auto verdict = refused();
  verdict.refused = {{"spec.runnerClassName", "RunnerClass \"team-web\" does not admit namespace \"ci\""}};
  verdict.drains = true;
  o.class_verdict = verdict;
  o.credentials_loaded = false;
  o.applied_objects.clear();
  add_runner(o, "linux-idle1", model::runner_phase::pending, true).status_runner_id = 11;
  add_runner(o, "linux-busy1", model::runner_phase::running, true).status_runner_id = 12;
  auto p = plan(o);
  EXPECT_TRUE(has(p, action_kind::read_credentials)) << "the class's credentials, to remove its runners";
  EXPECT_FALSE(has(p, action_kind::remove_idle_runner)) << "nothing to remove them with yet";

  o.credentials_loaded = true;
  p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::remove_idle_runner), std::vector<std::string>{"linux-idle1"});
  EXPECT_EQ(creates(p), 0);
  EXPECT_EQ(subjects(p, action_kind::stop_listener), std::vector<std::string>{""}) << "no new jobs";
  EXPECT_FALSE(has(p, action_kind::start_listener));
  EXPECT_FALSE(has(p, action_kind::register_scale_set));
  EXPECT_FALSE(has(p, action_kind::apply_object)) << "nothing written where no class admits it";
  auto c = class_condition_of(p);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->reason, "Refused");
  EXPECT_NE(c->message.find("idle ones are removed from GitHub and busy ones finish: spec.runnerClassName"),
            std::string::npos)
      << c->message;

  o.class_verdict->drains = false;  // its server withdrawn too
  p = plan(o);
  EXPECT_FALSE(has(p, action_kind::remove_idle_runner)) << "nothing goes to a server the class withdrew";
}

TEST(RunnerSetPlanClass, ASetOverItsLimitsStartsNoRunnerAndKeepsItsBusyOnes) {
  auto o = ready_set();
  o.class_verdict = over_limits();
  demand(o, 3);
  add_runner(o, "linux-busy1", model::runner_phase::running, true);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 0);
  EXPECT_FALSE(has(p, action_kind::remove_idle_runner)) << "a busy runner is never removed";
  auto c = class_condition_of(p);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->reason, "OverLimits");
  EXPECT_NE(c->message.find("No new runners start"), std::string::npos);

  o.class_verdict = model::class_verdict{
      .class_name = "team-web", .classless = false, .refused = {}, .limits = {}, .pod_security = {}};
  EXPECT_GT(creates(plan(o)), 0) << "admitted again: the jobs get runners";
}

TEST(RunnerSetPlanClass, AnIdleRunnerOfASetOverItsLimitsGoesOnceTheWindowAllows) {
  auto o = ready_set();
  o.class_verdict = over_limits();
  add_runner(o, "linux-idle1", model::runner_phase::pending, true);  // registered, no job: idle
  o.scale_down_period = {};
  EXPECT_EQ(subjects(plan(o), action_kind::remove_idle_runner), std::vector<std::string>{"linux-idle1"});
}

TEST(RunnerSetPlanClass, ARefusedSetBeingDeletedLeavesGitHubAlone) {
  auto o = ready_set();
  o.class_verdict = refused();
  o.credentials_loaded = false;
  o.scale_set_client = false;
  o.set->metadata.deleting = true;
  EXPECT_TRUE(github_unreachable_for_deletion(o))
      << "its deletion must not wait for credentials it may not use";
}

TEST(RunnerSetPlanClass, TheConditionSaysWhoAdmitsTheSet) {
  auto o = ready_set();
  o.class_verdict = model::class_verdict{
      .class_name = "team-web", .classless = false, .refused = {}, .limits = {}, .pod_security = {}};
  const auto admitted = plan(o);
  auto c = class_condition_of(admitted);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, "True");
  EXPECT_EQ(c->reason, "Admitted");
  EXPECT_EQ(c->message, "RunnerClass \"team-web\" admits the set");
  const auto classless = plan(ready_set());
  c = class_condition_of(classless);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->reason, "WithoutClass");
}

TEST(RunnerSetPlanClass, ARestrictedClassMakesItsRunnersSayRestricted) {
  auto o = ready_set();
  o.class_verdict = model::class_verdict{.class_name = "locked",
                                         .classless = false,
                                         .refused = {},
                                         .limits = {},
                                         .pod_security = model::pod_security_level::restricted};
  demand(o, 1);
  auto made = of(plan(o), action_kind::create_runners);
  ASSERT_FALSE(made.empty());
  ASSERT_TRUE(made[0].variant);
  EXPECT_EQ(made[0].variant->pod.pod_security, model::pod_security_level::restricted)
      << "its Runner carries the level, so its pod gets the level's defaults";

  o.class_verdict->pod_security = model::pod_security_level::baseline;
  made = of(plan(o), action_kind::create_runners);
  ASSERT_FALSE(made.empty());
  EXPECT_EQ(made[0].variant->pod.pod_security, model::pod_security_level::baseline)
      << "its pod gets baseline's seccomp profile";

  o.class_verdict->pod_security = model::pod_security_level::privileged;
  made = of(plan(o), action_kind::create_runners);
  ASSERT_FALSE(made.empty());
  EXPECT_FALSE(made[0].variant->pod.pod_security) << "privileged asks for nothing a template leaves out";
}

}  // namespace
}  // namespace octorun::runnerset
