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
  EXPECT_EQ(w.floor(t0 + 12s + 1ms, 1), 1) << "once every higher count is older than the window";
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
