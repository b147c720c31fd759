// The Runner's Registered and PodReady conditions (actors/runner/conditions.hpp):
// standard fields, and a lastTransitionTime that moves only with the status.
#include <gtest/gtest.h>

#include "actors/runner/conditions.hpp"
#include "common/json.hpp"

namespace octorun::runner {
namespace {

const model::condition* find(const std::vector<model::condition>& list, const std::string& type) {
  for (const auto& c : list)
    if (c.type == type) return &c;
  return nullptr;
}

TEST(RunnerConditions, BothAreSetWithTheirStatusReasonAndTransitionTime) {
  auto list = runner_conditions({}, {true, false, false}, "2026-12-02T08:00:00Z", 1);
  ASSERT_EQ(list.size(), 2u);
  const auto* registered = find(list, condition_registered);
  ASSERT_NE(registered, nullptr);
  EXPECT_EQ(registered->status, "True");
  EXPECT_EQ(registered->reason, "JitConfigStored");
  EXPECT_EQ(registered->last_transition_time, "2026-12-02T08:00:00Z");
  EXPECT_EQ(registered->observed_generation, 1);
  const auto* ready = find(list, condition_pod_ready);
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ(ready->status, "False");
  EXPECT_EQ(ready->reason, "PodNotReady");
}

TEST(RunnerConditions, TheTransitionTimeMovesOnlyWithTheStatus) {
  auto first = runner_conditions({}, {true, false, false}, "2026-12-02T08:00:00Z", 1);
  auto ready = runner_conditions(first, {true, true, false}, "2026-12-02T08:00:05Z", 1);
  EXPECT_EQ(find(ready, condition_registered)->last_transition_time, "2026-12-02T08:00:00Z");
  EXPECT_EQ(find(ready, condition_pod_ready)->last_transition_time, "2026-12-02T08:00:05Z");
  EXPECT_EQ(find(ready, condition_pod_ready)->status, "True");
  // The same facts again: nothing moves.
  auto again = runner_conditions(ready, {true, true, false}, "2026-12-02T08:09:00Z", 1);
  EXPECT_EQ(find(again, condition_pod_ready)->last_transition_time, "2026-12-02T08:00:05Z");
  // The runner container failed: False, reason PodFailed, a new transition.
  auto failed = runner_conditions(again, {true, false, true}, "2026-12-02T08:10:00Z", 1);
  EXPECT_EQ(find(failed, condition_pod_ready)->reason, "PodFailed");
  EXPECT_EQ(find(failed, condition_pod_ready)->last_transition_time, "2026-12-02T08:10:00Z");
}

TEST(RunnerConditions, OtherConditionsAreKeptAndTheListIsWrittenWhole) {
  model::condition other{"Custom", "True", "Because", "someone else's", "2026-01-01T00:00:00Z", 0};
  auto list = runner_conditions({other}, {true, true, false}, "2026-12-02T08:00:00Z", 2);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].type, "Custom");
  rapidjson::Document d(rapidjson::kObjectType);
  auto v = conditions_json(list, d.GetAllocator());
  d.AddMember("conditions", v, d.GetAllocator());
  EXPECT_EQ(
      json::write(d),
      R"({"conditions":[{"type":"Custom","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z",)"
      R"("reason":"Because","message":"someone else's"},{"type":"Registered","status":"True",)"
      R"("observedGeneration":2,"lastTransitionTime":"2026-12-02T08:00:00Z","reason":"JitConfigStored",)"
      R"("message":"GitHub registered the runner; its JIT configuration is in its Secret"},)"
      R"({"type":"PodReady","status":"True","observedGeneration":2,"lastTransitionTime":"2026-12-02T08:00:00Z",)"
      R"("reason":"PodReady","message":"the runner's pod is ready"}]})");
}

}  // namespace
}  // namespace octorun::runner
