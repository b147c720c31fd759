// model/start_time.hpp: warm runners sized over the start-ups observed, each
// counting, rather than for the slowest twentieth of them. Start-ups vary (a
// cached image or not, a node with room or not); a job's runner takes any of
// them, so the chance a job waits past the target is the average over them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <numeric>
#include <random>
#include <vector>

#include "model/start_time.hpp"
#include "test/unit/arrival_traces.hpp"

namespace octorun::model {
namespace {

using namespace traces;

double pmf(double mean, std::int64_t n) {
  return std::exp(-mean + static_cast<double>(n) * std::log(mean) - std::lgamma(static_cast<double>(n) + 1));
}

TEST(PoissonTail, IsOneLessTheSumOfTheTermsBelow) {
  EXPECT_EQ(poisson_tail(3, 0), 1);
  EXPECT_EQ(poisson_tail(3, -2), 1);
  EXPECT_EQ(poisson_tail(0, 1), 0);
  EXPECT_EQ(poisson_tail(-1, 1), 0);
  for (double mean : {0.05, 0.7, 3.0, 12.5, 40.0})
    for (std::int64_t k = 1; k < 80; ++k) {
      double below = 0;
      for (std::int64_t n = 0; n < k; ++n) below += pmf(mean, n);
      EXPECT_NEAR(poisson_tail(mean, k), std::max(0.0, 1 - below), 1e-12) << mean << " " << k;
    }
}

TEST(PoissonTail, LargeMeansNeitherUnderflowNorLoseTheUpperTail) {
  // e^-10000 underflows: the sums start at k, not at 0.
  EXPECT_NEAR(poisson_tail(10'000, 10'000), 0.5, 0.01);
  EXPECT_NEAR(poisson_tail(10'000, 10'200), 0.0233, 0.001);  // two standard deviations
  EXPECT_GT(poisson_tail(10, 60), 0);                        // far above 1 - cdf's resolution
  EXPECT_LT(poisson_tail(10, 60), 1e-20);
}

TEST(PoissonTail, AgreesWithTheQuantile) {
  for (double mean : {0.01, 0.5, 1.0, 5.5, 10.0, 100.0, 1000.0}) {
    const auto q = poisson_quantile(mean, 0.95);
    EXPECT_LE(poisson_tail(mean, q + 1), 0.05) << mean;
    EXPECT_GT(poisson_tail(mean, q), 0.05) << mean;
  }
}

// One start-up asks what its percentile asked before start-ups were averaged.
TEST(WarmRunnersFor, OneStartUpAsksThePercentilePlusOne) {
  for (double rate : {0.01, 0.1, 0.5, 2.0})
    for (std::int64_t startup : {6, 10, 60, 130})
      EXPECT_EQ(warm_runners_for({startup}, rate, 5, 0.95),
                poisson_quantile(rate * static_cast<double>(startup - 5), 0.95) + 1)
          << rate << " " << startup;
  EXPECT_EQ(warm_runners_for({}, 0.5, 5, 0.95), 0);
  EXPECT_EQ(warm_runners_for({3, 5, 5}, 0.5, 5, 0.95), 0);  // every start within the target
}

// The smallest k whose average chance of a wait past 5 s is within 5 %,
// counted term by term.
std::int64_t smallest_by_hand(const std::vector<std::int64_t>& startups, double rate) {
  for (std::int64_t k = 0;; ++k) {
    double sum = 0;
    for (auto s : startups) {
      if (s <= 5) continue;
      double below = 0;
      for (std::int64_t n = 0; n < k; ++n) below += pmf(rate * static_cast<double>(s - 5), n);
      sum += 1 - below;
    }
    if (sum / static_cast<double>(startups.size()) <= 0.05) return k;
  }
}

TEST(WarmRunnersFor, EachStartUpCountsForItsShare) {
  const auto alone = [](std::int64_t s, double rate) {
    return poisson_quantile(rate * static_cast<double>(s - 5), 0.95) + 1;
  };
  // 19 quick start-ups and one of 120 s: the slow one alone nearly uses up
  // the 5 %, so the quick ones are covered more tightly than on their own,
  // and far fewer are kept than the slow one alone would ask.
  std::vector<std::int64_t> one_slow(19, 8);
  one_slow.push_back(120);
  const auto k1 = warm_runners_for(one_slow, 0.2, 5, 0.95);
  EXPECT_EQ(k1, smallest_by_hand(one_slow, 0.2));
  EXPECT_GT(k1, alone(8, 0.2));
  EXPECT_LT(k1, alone(120, 0.2));
  // Half of them slow: fewer than the slow ones' own count, more than the
  // quick ones'.
  std::vector<std::int64_t> half(10, 8);
  half.insert(half.end(), 10, 65);
  const auto k2 = warm_runners_for(half, 0.2, 5, 0.95);
  EXPECT_EQ(k2, smallest_by_hand(half, 0.2));
  EXPECT_LT(k2, alone(65, 0.2));
  EXPECT_GT(k2, alone(8, 0.2));
  // Start-ups within the target count, as jobs that do not wait.
  std::vector<std::int64_t> mostly_quick(18, 3);
  mostly_quick.insert(mostly_quick.end(), {40, 40});
  EXPECT_EQ(warm_runners_for(mostly_quick, 0.2, 5, 0.95), smallest_by_hand(mostly_quick, 0.2));
  EXPECT_LT(warm_runners_for(mostly_quick, 0.2, 5, 0.95), alone(40, 0.2));
}

// Sized over the start-ups seen (the newest 50), or from their p95 alone.
played play(const std::vector<double>& arrivals, const std::vector<std::int64_t>& draws, bool averaged) {
  return traces::play(arrivals, draws, start_time_rule{}, averaged);
}

// Steady demand (6 jobs a minute) and start-ups spread evenly over 6-15 s,
// target 5 s: sized over the start-ups, the pool keeps fewer runners warm
// than sized for their p95, and still no more than 5 % of the jobs wait past
// the target once it is up.
TEST(StartTimeOverStartUps, VaryingStartUpsKeepFewerWarmAtTheSameShare) {
  std::mt19937 gen(340);
  std::vector<double> arrivals;
  poisson(arrivals, gen, 0.1, 0, 2 * 3600);
  std::vector<std::int64_t> draws;
  std::uniform_int_distribution<std::int64_t> startup(6, 15);
  for (int i = 0; i < 997; ++i) draws.push_back(startup(gen));
  const auto warm =
      static_cast<std::size_t>(std::lower_bound(arrivals.begin(), arrivals.end(), 900.0) - arrivals.begin());
  const auto averaged = play(arrivals, draws, true);
  const auto from_p95 = play(arrivals, draws, false);
  EXPECT_LE(averaged.share_over(5, warm), 0.05);
  EXPECT_LE(from_p95.share_over(5, warm), 0.05);
  EXPECT_LT(averaged.idle_buffer_sum, 0.85 * from_p95.idle_buffer_sum);
}

}  // namespace
}  // namespace octorun::model
