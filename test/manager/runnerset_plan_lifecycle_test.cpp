// The RunnerSet actor's reconcile as plan() decides it over an observation
// (no actor, no I/O, no cluster), as a set changes and goes: retired
// variants, deletion, its runner pods' per-set objects and template
// rollouts. Scaling is in runnerset_plan_test.cpp.
#include <gtest/gtest.h>

#include "actors/runnerset/plan.hpp"
#include "model/pod_config.hpp"
#include "test/manager/runnerset_plan_fixtures.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;
using namespace plan_fixtures;
using plan_fixtures::demand;  // not the struct runnerset::demand (scaling.hpp)

// ---- retired variants ------------------------------------------------------------------

set_observation with_retired_variant() {
  auto o = ready_set();
  o.set->spec.variants = {model::variant_spec{"a", {}, {}, {}, {}}};
  return o;
}

TEST(RunnerSetPlan, ARetiredVariantsRunnersAreDrainedBusyOnesAfterTheirJob) {
  auto o = with_retired_variant();
  add_runner(o, "linux-old-idle", model::runner_phase::pending, true, "old").status_runner_id = 5;
  add_runner(o, "linux-old-run", model::runner_phase::running, true, "old");
  add_runner(o, "linux-old-done", model::runner_phase::succeeded, false, "old");
  add_runner(o, "linux-old-held", model::runner_phase::pending, true, "old").busy_until = t0 + 1s;
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
  o.set->status.variants = {model::variant_status{"old", 9, {}, {}}};  // recorded before a restart
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
  add_runner(o, "linux-a", model::runner_phase::pending, true);
  add_runner(o, "linux-b", model::runner_phase::running, true);
  add_runner(o, "linux-c", model::runner_phase::pending, true).view.deleting = true;
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
  o.set->status.variants = {model::variant_status{"old", 9, {}, {}}};
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
  add_runner(o, "linux-a-x", model::runner_phase::pending, true, "a");
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

constexpr const char* hooks_binding = "RoleBinding/octorun-hooks-linux";
constexpr const char* legacy_binding = "RoleBinding/octorun-runner-linux";  // a manager's before issue 32

TEST(RunnerSetPlan, ContainerModeKubernetesBindsTheHooksClusterRoleAndDropsItWhenNothingNeedsIt) {
  auto o = ready_set();
  o.hooks_cluster_role = "octorun-runner-kubernetes-mode";
  o.set->spec.pod.container_mode = model::container_mode_spec{model::container_mode::kubernetes, ""};
  auto p = plan(o);
  EXPECT_EQ(subjects(p, action_kind::apply_object), (names{hooks_binding}));
  EXPECT_FALSE(has(p, action_kind::delete_object)) << "the old binding stays until the new one is in place";
  for (const auto& obj : desired_pod_resources(*o.set, o.hooks_cluster_role))
    o.applied_objects[obj.key] = obj.body;
  p = plan(o);
  EXPECT_FALSE(has(p, action_kind::apply_object));
  EXPECT_EQ(subjects(p, action_kind::delete_object), (names{legacy_binding}));
  o.deleted_objects.insert(legacy_binding);
  EXPECT_FALSE(has(plan(o), action_kind::delete_object));

  // The mode is dropped while a runner made in it still runs its job.
  o.set->spec.pod.container_mode.reset();
  add_runner(o, "linux-a", model::runner_phase::running, true).kubernetes_mode = true;
  EXPECT_FALSE(has(plan(o), action_kind::delete_object)) << "its job still calls the API";
  o.runners.clear();
  EXPECT_EQ(subjects(plan(o), action_kind::delete_object), (names{hooks_binding}));
  o.deleted_objects.insert(hooks_binding);
  o.applied_objects.erase(hooks_binding);
  EXPECT_FALSE(has(plan(o), action_kind::delete_object));
}

// A manager given no ClusterRole to bind (the chart's default) makes no
// runners for a kubernetes-mode set, says which value, and leaves the
// binding an older manager made alone: a busy runner keeps its rights.
TEST(RunnerSetPlan, ContainerModeKubernetesWithoutAClusterRoleSaysSoAndMakesNoRunners) {
  auto o = ready_set();
  o.set->spec.pod.container_mode = model::container_mode_spec{model::container_mode::kubernetes, ""};
  add_runner(o, "linux-a", model::runner_phase::running, true).kubernetes_mode = true;
  demand(o, 2);
  auto p = plan(o);
  EXPECT_EQ(creates(p), 0);
  EXPECT_FALSE(has(p, action_kind::apply_object));
  EXPECT_FALSE(has(p, action_kind::delete_object));
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("reason":"InvalidSpec","message":"spec.containerMode: type kubernetes )"
                                R"(needs the ClusterRole)"),
            std::string::npos)
      << status[0].text;
  EXPECT_NE(status[0].text.find("rbac.containerModeKubernetes=true"), std::string::npos) << status[0].text;
}

TEST(RunnerSetPlan, AStaleHooksBindingIsLookedForOnlyUnderASpecNotYetReconciled) {
  auto o = ready_set();
  EXPECT_FALSE(has(plan(o), action_kind::delete_object)) << "a DELETE per set per restart";
  o.set->metadata.generation = 3;
  o.set->status.observed_generation = 2;  // changed while the manager was away
  EXPECT_EQ(subjects(plan(o), action_kind::delete_object), (names{hooks_binding, legacy_binding}));
}

TEST(RunnerSetPlan, ARefusedApplyIsReportedAndRetriedLater) {
  auto o = ready_set();
  o.hooks_cluster_role = "octorun-runner-kubernetes-mode";
  o.set->spec.pod.container_mode = model::container_mode_spec{model::container_mode::kubernetes, ""};
  o.object_errors[hooks_binding] = "403 Forbidden: not allowed to bind";
  o.objects_retry_at = t0 + 30s;
  demand(o, 1);
  auto p = plan(o);
  EXPECT_FALSE(has(p, action_kind::apply_object));
  EXPECT_EQ(creates(p), 0) << "runners whose jobs could not start their containers";
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("type":"PodConfigReady","status":"False","reason":"ApplyFailed",)"
                                R"("message":"RoleBinding/octorun-hooks-linux: 403 Forbidden)"),
            std::string::npos)
      << status[0].text;
  o.now = t0 + 30s;
  EXPECT_EQ(subjects(plan(o), action_kind::apply_object), (names{hooks_binding}));
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
            (names{hooks_binding, legacy_binding, "ServiceAccount/octorun-runner-linux",
                   "PodDisruptionBudget/octorun-busy-linux"}));
  EXPECT_FALSE(has(p, action_kind::patch_finalizer));
  for (const auto& key : pod_resource_keys("linux")) o.deleted_objects.insert(key);
  // One the manager may not delete is left to the garbage collector (owner reference).
  o.deleted_objects.erase("PodDisruptionBudget/octorun-busy-linux");
  o.object_errors["PodDisruptionBudget/octorun-busy-linux"] = "403 Forbidden";
  EXPECT_TRUE(has(plan(o), action_kind::patch_finalizer));
  // While runners remain, none of them goes.
  add_runner(o, "linux-a", model::runner_phase::running, true);
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
constexpr std::uint64_t old_fingerprint = 0x0123456789abcdefULL;
std::uint64_t current_fingerprint(const set_observation& o) {
  return model::pod_fingerprint(o.set->spec.template_, o.set->spec.pod);
}

TEST(RunnerSetPlan, ARolloutReplacesIdleOutdatedRunnersInStepsAndNeverABusyOne) {
  auto o = rolled_set(4);
  add_runner(o, "linux-a", model::runner_phase::pending, true).pod_fingerprint = old_fingerprint;
  add_runner(o, "linux-b", model::runner_phase::pending, false).pod_fingerprint = old_fingerprint;
  add_runner(o, "linux-c", model::runner_phase::running, true).pod_fingerprint = old_fingerprint;
  add_runner(o, "linux-d", model::runner_phase::pending, true).pod_fingerprint = current_fingerprint(o);
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
  add_runner(o, "linux-e", model::runner_phase::pending, true).pod_fingerprint = current_fingerprint(o);
  p = plan(o);
  EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty()) << "linux-c is busy";
  status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("outdatedRunners":1)"), std::string::npos) << status[0].text;
}

TEST(RunnerSetPlan, NoRolloutWhileTheRunnerCrdDropsFieldsOfTheSpec) {
  auto o = rolled_set(2);
  add_runner(o, "linux-a", model::runner_phase::pending, true).pod_fingerprint = old_fingerprint;
  o.runner_crd_problem = "the Runner CRD is older than the manager";
  auto p = plan(o);
  EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty()) << "every new runner would be outdated too";
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("reason":"RunnerCRDOutdated")"), std::string::npos) << status[0].text;
}

TEST(RunnerSetPlan, AnUnchangedSetHasNoOutdatedRunners) {
  auto o = rolled_set(2);
  add_runner(o, "linux-a", model::runner_phase::pending, true).pod_fingerprint = current_fingerprint(o);
  add_runner(o, "linux-b", model::runner_phase::pending, true);  // fingerprint unknown
  auto p = plan(o);
  EXPECT_TRUE(of(p, action_kind::remove_idle_runner).empty());
  auto status = of(p, action_kind::publish_status);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_NE(status[0].text.find(R"("outdatedRunners":0)"), std::string::npos) << status[0].text;
}

TEST(RunnerSetPlan, ScaleDownTakesOutdatedRunnersBeforeCurrentOnes) {
  auto o = rolled_set(0);
  add_runner(o, "linux-a", model::runner_phase::pending, true).pod_fingerprint = current_fingerprint(o);
  add_runner(o, "linux-b", model::runner_phase::pending, true).pod_fingerprint = old_fingerprint;
  add_runner(o, "linux-c", model::runner_phase::pending, true).pod_fingerprint = current_fingerprint(o);
  demand(o, 2);
  // One too many: the outdated one goes (as a scale-down, or as the rollout's step).
  EXPECT_EQ(subjects(plan(o), action_kind::remove_idle_runner), (names{"linux-b"}));
}

TEST(RunnerSetPlan, AVariantsOwnContainerModeChangesOnlyItsRunners) {
  auto o = rolled_set(0);
  o.set->spec.variants = {model::variant_spec{"a", {"a"}, {}, {}, {}},
                          model::variant_spec{"b", {"b"}, {}, {}, {}}};
  auto before = model::effective_variants(o.set->spec);
  add_runner(o, "linux-a-x", model::runner_phase::pending, true, "a").pod_fingerprint =
      model::pod_fingerprint(*before[0].template_, before[0].pod);
  add_runner(o, "linux-b-x", model::runner_phase::pending, true, "b").pod_fingerprint =
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
  add_runner(o, "linux-a", model::runner_phase::succeeded, false);
  auto a = plan(o), b = plan(o);
  ASSERT_EQ(a.actions.size(), b.actions.size());
  for (std::size_t i = 0; i < a.actions.size(); ++i) {
    EXPECT_EQ(a.actions[i].kind, b.actions[i].kind);
    EXPECT_EQ(a.actions[i].subject, b.actions[i].subject);
  }
}

}  // namespace
}  // namespace octorun::runnerset
