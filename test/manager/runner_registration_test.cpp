// A Runner whose registration GitHub refuses says why on itself: Pending
// over an empty phase, Registered=False reason RegistrationFailed with
// GitHub's answer, and one Warning Event; then it asks again after its
// backoff, and says nothing more until the answer changes.
#include <gtest/gtest.h>

#include "actors/runner/conditions.hpp"
#include "actors/runner/events.hpp"
#include "actors/runner/next_step.hpp"
#include "actors/runner/observe.hpp"

namespace octorun::runner {
namespace {

using model::runner_phase;

using namespace std::chrono_literals;
const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
const std::string refused = "unauthorized (HTTP 401): Bad credentials";

// A new Runner with its finalizer whose JIT request GitHub refused.
observation refused_runner() {
  observation o;
  o.has_finalizer = true;
  o.now = t0;
  o.registration_failure = refused;
  o.registration_retry_at = t0 + 10s;
  return o;
}

TEST(RunnerRegistration, ARefusalIsPublishedAsPendingOnce) {
  auto o = refused_runner();
  auto s = next_step(o);
  EXPECT_EQ(s.kind, step_kind::publish_status);
  EXPECT_TRUE(s.registration_failed);
  ASSERT_TRUE(s.phase_to_publish);
  EXPECT_EQ(*s.phase_to_publish, runner_phase::pending);
  // Published: it waits for its backoff, then asks GitHub again.
  o.current = runner_phase::pending;
  o.registration_failure_published = true;
  auto later = next_step(o);
  EXPECT_EQ(later.kind, step_kind::wait_until);
  EXPECT_EQ(later.at, t0 + 10s);
  o.now = t0 + 10s;
  EXPECT_EQ(next_step(o).kind, step_kind::provision);
}

TEST(RunnerRegistration, APhaseIsNeverRegressedNorATerminalOneLeft) {
  auto o = refused_runner();
  o.current = runner_phase::pending;
  auto s = next_step(o);
  EXPECT_EQ(s.kind, step_kind::publish_status);
  EXPECT_FALSE(s.phase_to_publish) << "Pending already: only the condition changes";
  o.current = runner_phase::failed;
  EXPECT_EQ(next_step(o).kind, step_kind::none);
  o.current = runner_phase::unset;
  o.deleting = true;
  EXPECT_NE(next_step(o).kind, step_kind::publish_status) << "a Runner being deleted runs its course";
}

TEST(RunnerRegistration, WithoutARefusalNothingChanges) {
  observation o;
  o.has_finalizer = true;
  o.now = t0;
  EXPECT_EQ(next_step(o).kind, step_kind::provision);
  o.jit_unstored = true;
  o.registration_failure = refused;  // an old one: GitHub has registered it since
  EXPECT_EQ(next_step(o).kind, step_kind::store_secret);
}

TEST(RunnerRegistration, TheConditionSaysWhy) {
  runner_condition_facts facts;
  facts.registration_failure = refused;
  auto list = runner_conditions({}, facts, "2026-12-04T20:00:00Z", 1);
  ASSERT_EQ(list[0].type, condition_registered);
  EXPECT_EQ(list[0].status, "False");
  EXPECT_EQ(list[0].reason, "RegistrationFailed");
  EXPECT_EQ(list[0].message, refused);
  facts.registered = true;
  auto registered = runner_conditions(list, facts, "2026-12-04T20:01:00Z", 1);
  EXPECT_EQ(registered[0].reason, "JitConfigStored");
  EXPECT_EQ(registered[0].last_transition_time, "2026-12-04T20:01:00Z");
}

TEST(RunnerRegistration, ObservedAsPublishedOnlyWithTheSameAnswer) {
  model::runner r;
  r.status.conditions.push_back({"Registered", "False", "RegistrationFailed", refused, "t", 1});
  actor_memory memory;
  memory.registration_failure = refused;
  EXPECT_TRUE(observe(r, nullptr, nullptr, memory, t0).registration_failure_published);
  memory.registration_failure = "not_found (HTTP 404): Not Found";
  EXPECT_FALSE(observe(r, nullptr, nullptr, memory, t0).registration_failure_published);
}

TEST(RunnerRegistration, TheWarningNamesGitHubsAnswer) {
  auto e = event_for_registration_failure(refused);
  EXPECT_TRUE(e.warning);
  EXPECT_EQ(e.reason, "RegistrationFailed");
  EXPECT_NE(e.note.find(refused), std::string::npos) << e.note;
}

}  // namespace
}  // namespace octorun::runner
