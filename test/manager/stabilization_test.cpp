// Scale-down stabilization: removals wait out the window, scale-up never does.
#include "actors/runnerset/stabilization.hpp"

#include <gtest/gtest.h>

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;

TEST(ScaleDownWindow, KeepsTheHighestDesiredOfTheWindow) {
  scale_down_window w(10s);
  const auto t0 = scale_down_window::clock::time_point{} + 1h;
  EXPECT_EQ(w.floor(t0, 4), 4);
  EXPECT_EQ(w.floor(t0 + 1s, 3), 4) << "a dip right after 4 removes nothing";
  EXPECT_EQ(w.floor(t0 + 2s, 4), 4);
  EXPECT_EQ(w.floor(t0 + 3s, 1), 4);
  EXPECT_EQ(w.floor(t0 + 12s, 1), 4) << "the 4 of t0+2s is still inside the window";
  EXPECT_EQ(w.floor(t0 + 13s - 1ms, 1), 4) << "the 4 held until t0+3s";
  EXPECT_EQ(w.floor(t0 + 13s, 1), 1) << "once every higher count was replaced a window ago";
}

// A count holds until the next one: after a quiet spell (no plan for longer
// than the window) the dip still waits a whole window.
TEST(ScaleDownWindow, ACountHoldsUntilItIsReplaced) {
  scale_down_window w(10s);
  const auto t0 = scale_down_window::clock::time_point{} + 1h;
  EXPECT_EQ(w.floor(t0, 5), 5);
  EXPECT_EQ(w.peek(t0 + 30s, 0), 5) << "5 was the count of the whole window";
  EXPECT_EQ(w.next_drop(t0 + 30s, 0), t0 + 40s);
  EXPECT_EQ(w.floor(t0 + 30s, 0), 5);
  EXPECT_EQ(w.floor(t0 + 40s - 1ms, 0), 5);
  EXPECT_EQ(w.floor(t0 + 40s, 0), 0);
  EXPECT_EQ(w.next_drop(t0 + 40s, 0), std::nullopt) << "nothing left to fall";
}

// The wake-up for the next removal is when the highest count leaves the
// window, not a window after whatever plan noticed the dip.
TEST(ScaleDownWindow, NextDropIsWhenTheHighestCountLeavesTheWindow) {
  scale_down_window w(10s);
  const auto t0 = scale_down_window::clock::time_point{} + 1h;
  w.floor(t0, 3);
  w.floor(t0 + 2s, 2);  // 3 replaced at t0+2s
  w.floor(t0 + 4s, 1);  // 2 replaced at t0+4s
  EXPECT_EQ(w.next_drop(t0 + 5s, 1), t0 + 12s);
  EXPECT_EQ(w.floor(t0 + 12s, 1), 2);
  EXPECT_EQ(w.next_drop(t0 + 12s, 1), t0 + 14s);
  EXPECT_EQ(w.floor(t0 + 14s, 1), 1);
  EXPECT_EQ(w.next_drop(t0 + 5s, 3), std::nullopt) << "demand back up: nothing to fall";
}

TEST(ScaleDownWindow, NeverHoldsScaleUpBack) {
  scale_down_window w(10s);
  const auto t0 = scale_down_window::clock::time_point{} + 1h;
  EXPECT_EQ(w.floor(t0, 1), 1);
  EXPECT_EQ(w.floor(t0 + 1s, 5), 5);
  EXPECT_EQ(w.floor(t0 + 2s, 2), 5);
  EXPECT_EQ(w.floor(t0 + 3s, 7), 7);
}

TEST(ScaleDownWindow, AZeroWindowFollowsDesiredAtOnce) {
  scale_down_window w(0s);
  const auto t0 = scale_down_window::clock::time_point{} + 1h;
  EXPECT_EQ(w.floor(t0, 5), 5);
  EXPECT_EQ(w.floor(t0 + 1ms, 2), 2);
}

}  // namespace
}  // namespace octorun::runnerset
