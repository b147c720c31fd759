// A RunnerSet's GitHub budget: a rate-limit answer pauses every call until
// its retry time; near the end of the budget, new runners go and cleanup
// waits for the reset.
#include "actors/runnerset/github_budget.hpp"

#include <gtest/gtest.h>

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;
const auto t0 = budget_clock::time_point{} + 1h;

TEST(GitHubBudget, AnUnknownBudgetHoldsNothingBack) {
  github_budget b;
  EXPECT_EQ(github_call_not_before(github_call::new_runner, b, t0), t0);
  EXPECT_EQ(github_call_not_before(github_call::cleanup, b, t0), t0);
  EXPECT_FALSE(paused(b, t0));
}

TEST(GitHubBudget, ARateLimitPausesEveryCallOnceUntilItsRetryTime) {
  github_budget b;
  EXPECT_TRUE(record_rate_limit(b, t0, 60s)) << "a new pause: logged";
  EXPECT_FALSE(record_rate_limit(b, t0 + 1s, 60s)) << "the same pause, extended: not logged again";
  EXPECT_EQ(b.paused_until, t0 + 61s);
  for (auto call : {github_call::new_runner, github_call::cleanup})
    EXPECT_EQ(github_call_not_before(call, b, t0 + 30s), t0 + 61s);
  EXPECT_EQ(github_call_not_before(github_call::new_runner, b, t0 + 61s), t0 + 61s);
  EXPECT_FALSE(paused(b, t0 + 61s));
  EXPECT_TRUE(record_rate_limit(b, t0 + 100s, 0s)) << "a later answer is a new pause";
  EXPECT_EQ(b.paused_until, t0 + 101s) << "never a busy loop: at least a second";
}

TEST(GitHubBudget, NearTheEndNewRunnersGoFirstAndCleanupWaitsForTheReset) {
  github_budget b;
  b.limit = 5000;
  b.reset_at = t0 + 20min;
  b.remaining = 501;
  EXPECT_EQ(github_call_not_before(github_call::cleanup, b, t0), t0);
  b.remaining = 500;  // a tenth of the limit is kept for new runners
  EXPECT_EQ(github_call_not_before(github_call::cleanup, b, t0), t0 + 20min);
  EXPECT_EQ(github_call_not_before(github_call::new_runner, b, t0), t0);
  b.remaining = 0;  // spent: nothing goes before the reset (it would only be refused)
  EXPECT_EQ(github_call_not_before(github_call::new_runner, b, t0), t0 + 20min);
  // A reset that passed: the numbers are stale, calls go (and bring new ones).
  EXPECT_EQ(github_call_not_before(github_call::new_runner, b, t0 + 20min), t0 + 20min);
  EXPECT_EQ(github_call_not_before(github_call::cleanup, b, t0 + 21min), t0 + 21min);
}

TEST(GitHubBudget, TheReserveIsATenthOfTheLimit) {
  EXPECT_EQ(cleanup_reserve(5000), 500);
  EXPECT_EQ(cleanup_reserve(15), 1);
  EXPECT_EQ(cleanup_reserve(5), 1);
  EXPECT_EQ(cleanup_reserve(-1), 0) << "unknown limit (GHES without rate limiting)";
}

}  // namespace
}  // namespace octorun::runnerset
