// Template rollouts: which outdated runners leave now (rollout.hpp).
#include "actors/runnerset/rollout.hpp"

#include <gtest/gtest.h>

namespace octorun::runnerset {
namespace {

using names = std::vector<std::string>;

rollout_view idle_outdated(std::string name, bool ready = true, std::int64_t created = 0) {
  return {std::move(name), true, true, false, ready, created};
}

TEST(Rollout, TheBudgetIsAQuarterOfTheDesiredCountAndAtLeastOne) {
  EXPECT_EQ(replacement_budget(0), 1);
  EXPECT_EQ(replacement_budget(1), 1);
  EXPECT_EQ(replacement_budget(4), 1);
  EXPECT_EQ(replacement_budget(5), 2);
  EXPECT_EQ(replacement_budget(40), 10);
}

TEST(Rollout, OnlyIdleOutdatedRunnersAreReplacedNotOnlineOnesFirstThenTheOldest) {
  std::vector<rollout_view> runners{idle_outdated("a", true, 30), idle_outdated("b", true, 10),
                                    idle_outdated("c", false, 50), idle_outdated("d", true, 20)};
  runners.push_back({"busy", true, false, false, true, 1});      // has a job
  runners.push_back({"current", false, true, false, true, 1});   // not outdated
  EXPECT_EQ(runners_to_replace(8, runners), (names{"c", "b"}));  // budget 2
  EXPECT_EQ(runners_to_replace(40, runners), (names{"c", "b", "d", "a"}));
}

TEST(Rollout, RunnersAlreadyLeavingUseTheBudget) {
  std::vector<rollout_view> runners{idle_outdated("a"), idle_outdated("b")};
  runners.push_back({"going", true, false, true, true, 0});
  EXPECT_TRUE(runners_to_replace(4, runners).empty());
  EXPECT_EQ(runners_to_replace(8, runners), (names{"a"}));
  // A current runner leaving (scale-down) does not count.
  runners.back().outdated = false;
  EXPECT_EQ(runners_to_replace(4, runners), (names{"a"}));
}

TEST(Rollout, ABusyOutdatedRunnerIsNeverChosen) {
  std::vector<rollout_view> runners{{"busy", true, false, false, true, 0}};
  EXPECT_TRUE(runners_to_replace(100, runners).empty());
}

}  // namespace
}  // namespace octorun::runnerset
