// The RunnerSet's conditions follow metav1.Condition, as the Runner's do
// (model/conditions.hpp): observedGeneration, and a lastTransitionTime that
// moves only when a condition's status does (set_conditions in
// actors/runnerset/set_status.hpp), carried from the last write.
#include <gtest/gtest.h>

#include "actors/runnerset/plan.hpp"
#include "actors/runnerset/set_status.hpp"
#include "test/manager/runnerset_plan_fixtures.hpp"

namespace octorun::runnerset {
namespace {

using namespace plan_fixtures;
using verdict = github_access::verdict;

// The status action of a plan of `o` (one expected).
action status_of(const set_observation& o) {
  auto status = of(plan(o), action_kind::publish_status);
  EXPECT_EQ(status.size(), 1u);
  return status.empty() ? action{} : status.front();
}

// The CredentialsReady condition a status action writes (type empty: none).
model::condition credentials_ready(const action& status) {
  for (const auto& c : status.conditions)
    if (c.type == "CredentialsReady") return c;
  return {};
}

// `o` as it is once `status` was written.
void written(set_observation& o, const action& status) {
  o.published_status = status.text;
  o.published_conditions = status.conditions;
}

TEST(RunnerSetConditions, CarryObservedGenerationAndTransitionTime) {
  auto o = ready_set();
  o.set->metadata.generation = 4;
  o.wall_time = "2026-12-04T20:00:00Z";
  auto first = status_of(o);
  auto ready = credentials_ready(first);
  EXPECT_EQ(ready.status, "True");
  EXPECT_EQ(ready.observed_generation, 4);
  EXPECT_EQ(ready.last_transition_time, "2026-12-04T20:00:00Z");
  EXPECT_NE(first.text.find(R"({"type":"CredentialsReady","status":"True","observedGeneration":4,)"
                            R"("lastTransitionTime":"2026-12-04T20:00:00Z","reason":"Loaded","message":""})"),
            std::string::npos)
      << first.text;

  // Written: a later plan keeps the time while the status stays, so the
  // status text is the same and nothing is written again.
  written(o, first);
  o.wall_time = "2026-12-04T20:05:00Z";
  EXPECT_FALSE(has(plan(o), action_kind::publish_status));

  // GitHub refuses the token: the status changes, and the time with it.
  o.access = {verdict::refused, "HTTP 401: Bad credentials"};
  auto refused = status_of(o);
  ready = credentials_ready(refused);
  EXPECT_EQ(ready.status, "False");
  EXPECT_EQ(ready.reason, "CredentialsRefused");
  EXPECT_EQ(ready.last_transition_time, "2026-12-04T20:05:00Z");

  // Another reason with the same status: the time stays.
  written(o, refused);
  o.wall_time = "2026-12-04T20:09:00Z";
  o.access = {verdict::scope_not_found, "HTTP 404: Not Found"};
  ready = credentials_ready(status_of(o));
  EXPECT_EQ(ready.reason, "ScopeNotFound");
  EXPECT_EQ(ready.last_transition_time, "2026-12-04T20:05:00Z");
}

TEST(RunnerSetConditions, AFreshActorStartsFromTheWatchedStatus) {
  auto o = ready_set();
  o.wall_time = "2026-12-04T21:00:00Z";
  o.set->status.conditions.push_back({"CredentialsReady", "True", "Loaded", "", "2026-12-01T08:00:00Z", 1});
  EXPECT_EQ(credentials_ready(status_of(o)).last_transition_time, "2026-12-01T08:00:00Z")
      << "what the last leader wrote";
}

TEST(RunnerSetConditions, OnlyTheTypesThatApplyAreWritten) {
  std::vector<model::condition> previous{{"IntakeReady", "False", "WebhookIntakeDisabled", "", "t1", 1},
                                         {"CredentialsReady", "True", "Loaded", "", "t1", 1}};
  auto out = set_conditions(previous, {{"CredentialsReady", "True", "Loaded", "", "", 0}}, "t2", 2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, "CredentialsReady");
  EXPECT_EQ(out[0].last_transition_time, "t1");
  EXPECT_EQ(out[0].observed_generation, 2);
}

}  // namespace
}  // namespace octorun::runnerset
