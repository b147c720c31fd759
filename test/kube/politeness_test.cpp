// Token bucket and backoff, on an injected clock.
#include "adapters/kube/politeness.hpp"

#include <gtest/gtest.h>

namespace octorun::kube {
namespace {

using namespace std::chrono_literals;

TEST(TokenBucket, BurstThenQps) {
  auto now = steady_clock::time_point{} + 1h;
  token_bucket b(10, 3, [&] { return now; });
  EXPECT_TRUE(b.try_take());
  EXPECT_TRUE(b.try_take());
  EXPECT_TRUE(b.try_take());
  EXPECT_FALSE(b.try_take());
  now += 100ms;  // one token at 10 QPS
  EXPECT_TRUE(b.try_take());
  EXPECT_FALSE(b.try_take());
  now += 10s;  // refills to the burst, not beyond
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(b.try_take());
  EXPECT_FALSE(b.try_take());
}

TEST(TokenBucket, ReservationsQueueFairly) {
  auto now = steady_clock::time_point{} + 1h;
  token_bucket b(5, 1, [&] { return now; });
  EXPECT_EQ(b.reserve(), 0ns);
  EXPECT_EQ(b.reserve(), 200ms);  // second caller waits one token
  EXPECT_EQ(b.reserve(), 400ms);  // third waits two
  now += 400ms;
  EXPECT_EQ(b.reserve(), 200ms);
}

TEST(TokenBucket, ZeroQpsMeansUnlimited) {
  token_bucket b(0, 1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(b.reserve(), 0ns);
}

TEST(Backoff, GrowsWithJitterAndIsCapped) {
  backoff b(100ms, 1s, 2.0, 0.5, 42);
  std::vector<std::chrono::milliseconds> bases = {100ms, 200ms, 400ms, 800ms, 1s, 1s, 1s};
  for (auto base : bases) {
    auto d = b.next();
    EXPECT_LE(d, base);
    EXPECT_GE(d, base / 2);
  }
  b.reset();
  EXPECT_LE(b.next(), 100ms);
}

TEST(Backoff, JitterSpreadsRetries) {
  backoff a(1s, 30s, 2.0, 0.5, 1), c(1s, 30s, 2.0, 0.5, 2);
  bool differ = false;
  for (int i = 0; i < 5; ++i) differ = differ || a.next() != c.next();
  EXPECT_TRUE(differ);
}

}  // namespace
}  // namespace octorun::kube
