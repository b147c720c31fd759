// The one backoff: capped exponential growth, the jitter band, the cap.
#include "common/backoff.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace octorun {
namespace {

using namespace std::chrono_literals;
using ms = std::chrono::milliseconds;

TEST(Backoff, DoublesFromInitialUpToTheCap) {
  const exponential_backoff<ms> b{100ms, 1s};
  std::vector<ms> delays;
  for (int attempt = 0; attempt < 7; ++attempt) delays.push_back(b.delay(attempt));
  EXPECT_EQ(delays, (std::vector<ms>{100ms, 200ms, 400ms, 800ms, 1s, 1s, 1s}));
}

TEST(Backoff, HugeAndNegativeAttemptsStayInRange) {
  const exponential_backoff<ms> b{100ms, 1s};
  EXPECT_EQ(b.delay(1'000'000), 1s);
  EXPECT_EQ(b.delay(-3), 100ms);
}

TEST(Backoff, OtherFactors) {
  const exponential_backoff<ms> b{100ms, 10s, 3.0};
  EXPECT_EQ(b.delay(2), 900ms);
}

TEST(Backoff, TheRandomValueMovesLinearlyThroughTheBand) {
  const exponential_backoff<ms> b{100ms, 10s, 2.0, jitter_band{0.5, 1.5}};
  EXPECT_EQ(b.delay(1, 0.0), 100ms);
  EXPECT_EQ(b.delay(1, 0.5), 200ms);
  EXPECT_EQ(b.delay(1, 1.0), 300ms);
  EXPECT_EQ(b.delay(1, -1.0), 100ms);  // clamped to the band
  EXPECT_EQ(b.delay(1, 7.0), 300ms);
}

TEST(Backoff, JitterNeverPushesPastTheCap) {
  const exponential_backoff<ms> b{1s, 2s, 2.0, jitter_around(0.5)};
  EXPECT_EQ(b.delay(0, 1.0), 1500ms);
  EXPECT_EQ(b.delay(1, 1.0), 2s);
  EXPECT_EQ(b.delay(5, 0.0), 1s);
}

TEST(Backoff, NamedBands) {
  EXPECT_DOUBLE_EQ(equal_jitter.low, 0.5);
  EXPECT_DOUBLE_EQ(equal_jitter.high, 1.0);
  EXPECT_DOUBLE_EQ(jitter_below(0.25).low, 0.75);
  EXPECT_DOUBLE_EQ(jitter_below(3.0).low, 0.0);  // a delay never goes negative
  EXPECT_DOUBLE_EQ(jitter_around(0.2).high, 1.2);
  const exponential_backoff<ms> no_jitter{100ms, 1s};
  EXPECT_EQ(no_jitter.delay(0, 0.0), no_jitter.delay(0, 1.0));
}

TEST(Backoff, WorksInAnyDurationUnit) {
  const exponential_backoff<std::chrono::seconds> b{5s, 300s};
  EXPECT_EQ(b.delay(0), 5s);
  EXPECT_EQ(b.delay(3), 40s);
  EXPECT_EQ(b.delay(10), 300s);
}

}  // namespace
}  // namespace octorun
