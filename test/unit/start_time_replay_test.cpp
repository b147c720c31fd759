// model/start_time.hpp: the warm-runner count replayed on the arrivals
// observed (warm_runners_replayed) rather than taken from a Poisson
// assumption. Arrivals that come more evenly than Poisson keep fewer runners
// warm for the same share of jobs within the target; Poisson arrivals keep
// the share; clustered ones never keep more than the Poisson count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include "model/start_time.hpp"
#include "test/unit/arrival_traces.hpp"

namespace octorun::model {
namespace {

using namespace traces;

std::vector<double> every(double seconds, double from, double to) {
  std::vector<double> out;
  for (double t = from; t < to; t += seconds) out.push_back(t);
  return out;
}

// A job every 4 s and runners online in 9 s, target 5 s: no job ever had
// another in the 4 s before it, so one warm runner (the replacement of the
// last job's) serves every job; Poisson at the same rate asks for four.
TEST(WarmRunnersReplayed, EvenArrivalsNeedOnlyWhatTheyShow) {
  const auto arrivals = every(4, -600, 0);
  const auto poisson_count = warm_runners_for({9}, 0.25, 5, 0.95);
  EXPECT_EQ(poisson_count, 4);
  EXPECT_EQ(warm_runners_replayed(arrivals, -600, {9}, 1.0, 5, 0.95, poisson_count, 50), 1);
  // Spans stretched by a rising rate see the arrival before: two.
  EXPECT_EQ(warm_runners_replayed(arrivals, -600, {9}, 1.5, 5, 0.95, poisson_count, 50), 2);
  // Start-ups within the target ask for nothing.
  EXPECT_EQ(warm_runners_replayed(arrivals, -600, {3, 5}, 1.0, 5, 0.95, poisson_count, 50), 0);
}

TEST(WarmRunnersReplayed, TooFewArrivalsOrABurstLeaveThePoissonCount) {
  // 40 arrivals: fewer than the 50 it needs to judge a 5 % tail by.
  EXPECT_EQ(warm_runners_replayed(every(4, -160, 0), -600, {9}, 1.0, 5, 0.95, 4, 50), std::nullopt);
  // Arrivals with less than a span observed before them are not replayed:
  // observed from -100 s, a 55 s span leaves those after -45 s (12 of them).
  EXPECT_EQ(warm_runners_replayed(every(4, -600, 0), -100, {60}, 1.0, 5, 0.95, 20, 50), std::nullopt);
  // 200 jobs at once: each had up to 199 before it in any span; the count
  // stays at the most it may take.
  const std::vector<double> burst(200, -1.0);
  EXPECT_EQ(warm_runners_replayed(burst, -600, {60}, 1.0, 5, 0.95, 27, 50), 27);
}

// The share of waits is taken one higher than observed: 100 replayed
// arrivals of which 4 had another within the span show 5/101 with one warm.
TEST(WarmRunnersReplayed, ATailIsJudgedOneWaitHigherThanObserved) {
  std::vector<double> arrivals = every(10, -1000, 0);  // 100, none within 4 s of another
  for (int i = 0; i < 4; ++i) arrivals.push_back(-995 + 200.0 * i + 2);
  std::sort(arrivals.begin(), arrivals.end());
  // 104 replayed, 4 with one before them in 4 s: (4 + 1) / 105 <= 5 % with 1.
  EXPECT_EQ(warm_runners_replayed(arrivals, -1000, {9}, 1.0, 5, 0.95, 5, 50), 1);
  for (int i = 0; i < 2; ++i) arrivals.push_back(-895 + 200.0 * i + 2);
  std::sort(arrivals.begin(), arrivals.end());
  // 6 of 106: (6 + 1) / 107 > 5 %: two.
  EXPECT_EQ(warm_runners_replayed(arrivals, -1000, {9}, 1.0, 5, 0.95, 5, 50), 2);
}

// The rule with the replay on, or off (min_replayed past any window: the
// Poisson count alone).
played play(const std::vector<double>& arrivals, const std::vector<std::int64_t>& draws, bool replay) {
  start_time_rule rule;
  if (!replay) rule.min_replayed = 1'000'000;
  return traces::play(arrivals, draws, rule);
}

std::vector<std::int64_t> startups_4_to_9(std::mt19937& gen) {
  std::uniform_int_distribution<std::int64_t> startup(4, 9);
  std::vector<std::int64_t> draws;
  for (int i = 0; i < 997; ++i) draws.push_back(startup(gen));
  return draws;
}

std::size_t after(const std::vector<double>& arrivals, double seconds) {
  return static_cast<std::size_t>(std::lower_bound(arrivals.begin(), arrivals.end(), seconds) -
                                  arrivals.begin());
}

// 15 jobs a minute for two hours, each placed at random within its own
// 4-second slot (as the load-test tool spreads a day's jobs), start-ups of
// 4-9 s, target 5 s: replayed, the pool keeps fewer runners warm, and still
// no more than 5 % of the jobs wait past the target.
TEST(StartTimeReplayed, JobsSpreadEvenlyKeepFewerWarmAtTheSameShare) {
  std::mt19937 gen(3434);
  std::uniform_real_distribution<double> within(0, 4);
  std::vector<double> arrivals;
  for (int n = 0; n < 1800; ++n) arrivals.push_back(4.0 * n + within(gen));
  std::sort(arrivals.begin(), arrivals.end());
  const auto draws = startups_4_to_9(gen);
  const auto replayed = play(arrivals, draws, true);
  const auto assumed = play(arrivals, draws, false);
  const auto warm = after(arrivals, 900);
  EXPECT_LE(replayed.share_over(5, warm), 0.05);
  EXPECT_LE(assumed.share_over(5, warm), 0.05);
  EXPECT_LT(replayed.idle_buffer_sum, 0.8 * assumed.idle_buffer_sum);
}

// Poisson arrivals at the same rate: replayed, the share stays within 5 %
// (the replay shows the Poisson tail, one wait higher), at about the
// Poisson count's cost.
TEST(StartTimeReplayed, PoissonArrivalsKeepTheShare) {
  std::mt19937 gen(3435);
  std::vector<double> arrivals;
  poisson(arrivals, gen, 0.25, 0, 2 * 3600);
  const auto draws = startups_4_to_9(gen);
  const auto replayed = play(arrivals, draws, true);
  const auto assumed = play(arrivals, draws, false);
  const auto warm = after(arrivals, 900);
  EXPECT_LE(replayed.share_over(5, warm), 0.05);
  EXPECT_GT(replayed.idle_buffer_sum, 0.8 * assumed.idle_buffer_sum);
  EXPECT_LE(replayed.idle_buffer_sum, assumed.idle_buffer_sum);
}

// Jobs that come in pairs (a push that starts two): the Poisson count at the
// rate misses them, and the replay never keeps more than it.
TEST(StartTimeReplayed, ClusteredArrivalsNeverKeepMoreThanThePoissonCount) {
  std::mt19937 gen(3436);
  std::vector<double> pairs;
  poisson(pairs, gen, 0.125, 0, 2 * 3600);
  std::vector<double> arrivals;
  for (double t : pairs) arrivals.insert(arrivals.end(), {t, t + 0.01});
  const auto draws = startups_4_to_9(gen);
  const auto replayed = play(arrivals, draws, true);
  const auto assumed = play(arrivals, draws, false);
  EXPECT_DOUBLE_EQ(replayed.idle_buffer_sum, assumed.idle_buffer_sum);
}

}  // namespace
}  // namespace octorun::model
