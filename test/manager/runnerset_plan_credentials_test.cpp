// The RunnerSet's finalizer on its credentials Secret as plan() decides it:
// held while GitHub may hold the set's runners or scale sets, so that a
// namespace deletion (which deletes the Secret with everything else) waits
// for their removal; released before the set's own finalizer, and on a
// Secret the set no longer names.
#include <gtest/gtest.h>

#include "actors/runnerset/plan.hpp"
#include "model/naming.hpp"
#include "test/manager/runnerset_plan_fixtures.hpp"

namespace octorun::runnerset {
namespace {

using namespace plan_fixtures;

set_observation with_secret(bool held, bool deleting = false) {
  auto o = ready_set();
  o.credentials_secret = credentials_secret_view{"gh-app", deleting, held};
  return o;
}

std::vector<std::pair<std::string, bool>> patches(const set_plan& p) {
  std::vector<std::pair<std::string, bool>> out;
  for (const auto& a : of(p, action_kind::patch_credentials_finalizer)) out.emplace_back(a.subject, a.on);
  return out;
}

using held = std::vector<std::pair<std::string, bool>>;

// Being deleted, its per-set objects gone already.
void deleting(set_observation& o) {
  o.set->metadata.deleting = true;
  for (const auto& key : pod_resource_keys("linux")) o.deleted_objects.insert(key);
}

TEST(RunnerSetCredentialsFinalizer, IsHeldOnceTheSecretIsReadAndOnceOnly) {
  auto o = ready_set();
  EXPECT_TRUE(patches(plan(o)).empty()) << "not read yet";
  o = with_secret(false);
  EXPECT_EQ(patches(plan(o)), (held{{"gh-app", true}}));
  o.in_flight.insert({action_kind::patch_credentials_finalizer, "gh-app"});
  EXPECT_TRUE(patches(plan(o)).empty()) << "sent twice";
  EXPECT_TRUE(patches(plan(with_secret(true))).empty());
}

TEST(RunnerSetCredentialsFinalizer, ASecretBeingDeletedIsHeldWhileGitHubHoldsARunnerThenReleased) {
  auto o = with_secret(true, true);
  add_runner(o, "linux-aaaaa", model::runner_phase::running, true);
  EXPECT_TRUE(patches(plan(o)).empty()) << "its runner is removed from GitHub with these credentials";
  o.runners.clear();
  o.deferred_removals[41] = deferred_removal{"linux-bbbbb", {}};
  EXPECT_TRUE(patches(plan(o)).empty()) << "a removal waits for GitHub's budget";
  o.deferred_removals.clear();
  EXPECT_EQ(patches(plan(o)), (held{{"gh-app", false}}));
  EXPECT_TRUE(patches(plan(with_secret(false, true))).empty())
      << "no finalizer is added to a Secret being deleted";
}

TEST(RunnerSetCredentialsFinalizer, AListenerSetHoldsItWhileItsScaleSetsAreRegistered) {
  auto o = listener_set();
  registered(o, 0);
  o.credentials_secret = credentials_secret_view{"gh-app", true, true};
  EXPECT_TRUE(patches(plan(o)).empty());
}

TEST(RunnerSetCredentialsFinalizer, DeletionReleasesItOnceGitHubHoldsNothingAndOnlyThenTheSet) {
  auto o = with_secret(true, true);
  deleting(o);
  add_runner(o, "linux-aaaaa", model::runner_phase::pending, true);
  auto p = plan(o);
  EXPECT_TRUE(patches(p).empty());
  EXPECT_FALSE(has(p, action_kind::patch_finalizer));
  o.runners.clear();
  o.no_runners_confirmed = true;
  p = plan(o);
  EXPECT_EQ(patches(p), (held{{"gh-app", false}}));
  EXPECT_FALSE(has(p, action_kind::patch_finalizer)) << "the set outlives the hold on its credentials";
  o.credentials_secret->held = false;
  p = plan(o);
  EXPECT_TRUE(patches(p).empty());
  ASSERT_TRUE(has(p, action_kind::patch_finalizer));
  EXPECT_FALSE(of(p, action_kind::patch_finalizer)[0].on);
}

TEST(RunnerSetCredentialsFinalizer, ASecretTheSetNamedBeforeIsReleased) {
  auto o = with_secret(true);
  o.former_credentials = {"old-pat"};
  EXPECT_EQ(patches(plan(o)), (held{{"old-pat", false}}));
  deleting(o);
  o.no_runners_confirmed = true;
  auto p = plan(o);
  EXPECT_EQ(patches(p), (held{{"old-pat", false}, {"gh-app", false}}));
  EXPECT_FALSE(has(p, action_kind::patch_finalizer));
}

TEST(RunnerSetCredentialsFinalizer, TheFinalizerIsNamedAfterTheSet) {
  EXPECT_EQ(model::credentials_finalizer("linux"), "runnerset.octorun.io/linux");
}

}  // namespace
}  // namespace octorun::runnerset
