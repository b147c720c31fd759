// model/start_time.hpp size_warm_nodes: the runner-shaped chunks of spare
// node capacity a start-time target asks of the node autoscaler, over
// arrival traces (steady Poisson, a 10x peak, demand that stops). A small
// model plays them: every job makes a runner, which takes the chunk that is
// ready first (waiting for a node if none is), and the autoscaler refills
// the buffer to the sizing's chunks with nodes ready N later.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "model/start_time.hpp"
#include "test/unit/arrival_traces.hpp"

namespace octorun::model {
namespace {

using namespace std::chrono_literals;
using namespace traces;

struct played {
  std::vector<double> node_waits;    // each runner's wait for a node, seconds
  std::vector<std::int32_t> chunks;  // the sizing at each job's arrival
  double share_waiting(std::size_t from = 0) const {
    const auto n = std::count_if(node_waits.begin() + static_cast<std::ptrdiff_t>(from), node_waits.end(),
                                 [](double w) { return w > 0; });
    return static_cast<double>(n) / static_cast<double>(node_waits.size() - from);
  }
};

start_time_sizing runners_sized(const start_time_observations& observed, double now, std::int64_t startup,
                                std::int32_t target) {
  auto f = facts_at(observed, now, target, 10'000);
  f.startup_p95 = startup;
  return size_warm_runners(f);
}

// Plays `arrivals` against nodes that take `node_startup` seconds; runners
// take `startup` in all (node included) and the target is `target`.
played play(const std::vector<double>& arrivals, std::int64_t node_startup, std::int64_t startup = 80,
            std::int32_t target = 5) {
  played out;
  start_time_observations observed;
  std::vector<double> buffer;  // chunks ready (or coming) at these times
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const double t = arrivals[i];
    observed.add_arrival(static_cast<std::int64_t>(i), at(t));
    const auto s = runners_sized(observed, t, startup, target);
    warm_node_facts f;
    f.runners = &s;
    f.node_startup_p95 = node_startup;
    f.max_runners = 10'000;
    f.runners_now = static_cast<std::int64_t>(i);
    const auto w = size_warm_nodes(f);
    out.chunks.push_back(w.chunks);
    std::sort(buffer.begin(), buffer.end());
    while (static_cast<std::int64_t>(buffer.size()) > w.chunks) buffer.pop_back();  // not ready ones first
    while (static_cast<std::int64_t>(buffer.size()) < w.chunks)
      buffer.push_back(t + static_cast<double>(node_startup));
    std::sort(buffer.begin(), buffer.end());
    if (buffer.empty() || buffer.front() > t + static_cast<double>(node_startup)) {
      out.node_waits.push_back(static_cast<double>(node_startup));  // a node of its own
    } else {
      out.node_waits.push_back(std::max(0.0, buffer.front() - t));
      buffer.erase(buffer.begin());
      buffer.push_back(t + static_cast<double>(node_startup));  // the autoscaler replaces the chunk
    }
  }
  return out;
}

TEST(WarmNodes, OnlyWaitsForANodeAreSamples) {
  node_startup_samples s;
  EXPECT_FALSE(s.add(0));
  EXPECT_FALSE(s.add(5)) << "a pod that found room";
  EXPECT_TRUE(s.add(61));
  EXPECT_EQ(s.seconds, std::deque<std::int64_t>{61});
  for (int i = 0; i < 60; ++i) s.add(10 + i);
  EXPECT_EQ(s.seconds.size(), 50u);
  EXPECT_EQ(s.seconds.front(), 20);
  EXPECT_EQ(p95(s.seconds), 67);
}

// Steady Poisson demand (6 jobs a minute), nodes ready in 60 s: the rule
// asks for 11 chunks (Poisson(0.1 * 60) at 95 % is 10, plus one), and once
// they are up fewer than 5 % of the runners wait for a node. Without
// chunks every runner would.
TEST(WarmNodes, SteadyPoissonDemandFindsANodeReady) {
  std::mt19937 gen(34);
  std::vector<double> arrivals;
  poisson(arrivals, gen, 0.1, 0, 2 * 3600);
  ASSERT_GT(arrivals.size(), 600u);
  const auto p = play(arrivals, 60);
  const auto warm = static_cast<std::size_t>(std::lower_bound(arrivals.begin(), arrivals.end(), 900.0) -
                                             arrivals.begin());  // after 15 minutes
  EXPECT_LT(p.share_waiting(warm), 0.05);
  const auto late = std::vector<std::int32_t>(p.chunks.end() - 100, p.chunks.end());
  EXPECT_GE(*std::min_element(late.begin(), late.end()), 8);
  EXPECT_LE(*std::max_element(late.begin(), late.end()), 18);
}

// A 10x peak: the buffer grows with it within a few minutes and shrinks once
// it has left the window.
TEST(WarmNodes, ATenfoldPeakGrowsTheBufferAndItShrinksAfter) {
  std::mt19937 gen(7);
  std::vector<double> arrivals;
  poisson(arrivals, gen, 1.0 / 60, 0, 1800);
  const auto peak_from = arrivals.size();
  poisson(arrivals, gen, 10.0 / 60, 1800, 3000);
  const auto peak_to = arrivals.size();
  poisson(arrivals, gen, 1.0 / 60, 3000, 5400);
  const auto p = play(arrivals, 60);
  EXPECT_LE(p.chunks[peak_from - 1], 5);
  EXPECT_GE(p.chunks[peak_to - 1], 12);
  EXPECT_LE(p.chunks.back(), 5);
  EXPECT_LT(p.share_waiting(), 0.10);
}

TEST(WarmNodes, NoneWhenDemandStopsNoNodeWaitedOrAColdStartIsFastEnough) {
  start_time_observations observed;
  for (int i = 0; i < 30; ++i) observed.add_arrival(i, at(i * 20.0));
  auto s = runners_sized(observed, 29 * 20.0 + 60, 80, 5);
  warm_node_facts f;
  f.runners = &s;
  f.node_startup_p95 = 60;
  f.max_runners = 100;
  EXPECT_EQ(size_warm_nodes(f).chunks, poisson_quantile(s.arrivals_per_minute, 0.95) + 1);
  EXPECT_GT(size_warm_nodes(f).chunks, 0);
  // Ten minutes after the last job: none.
  s = runners_sized(observed, 29 * 20.0 + 600, 80, 5);
  EXPECT_EQ(size_warm_nodes(f).chunks, 0);
  // No pod waited for a node: nothing says nodes are added.
  s = runners_sized(observed, 29 * 20.0 + 60, 80, 5);
  f.node_startup_p95.reset();
  EXPECT_EQ(size_warm_nodes(f).chunks, 0);
  EXPECT_EQ(size_warm_nodes(f).node_startup_p95, std::nullopt);
  // A runner's whole start-up meets the target.
  f.node_startup_p95 = 60;
  s = runners_sized(observed, 29 * 20.0 + 60, 80, 90);
  EXPECT_EQ(size_warm_nodes(f).chunks, 0);
  // No target: no sizing.
  f.runners = nullptr;
  EXPECT_EQ(size_warm_nodes(f), warm_node_sizing{.node_startup_p95 = 60});
}

TEST(WarmNodes, BoundedByMaxRunnersLessTheRunners) {
  start_time_observations observed;
  for (int i = 0; i < 100; ++i) observed.add_arrival(i, at(i));
  const auto s = runners_sized(observed, 100, 80, 5);
  warm_node_facts f;
  f.runners = &s;
  f.node_startup_p95 = 60;
  f.max_runners = 200;
  f.runners_now = 190;
  auto w = size_warm_nodes(f);
  EXPECT_GT(w.wanted, 10);
  EXPECT_EQ(w.chunks, 10);
  f.runners_now = 250;  // over maxRunners (it was lowered)
  EXPECT_EQ(size_warm_nodes(f).chunks, 0);
}

}  // namespace
}  // namespace octorun::model
