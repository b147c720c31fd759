// model/start_time.hpp: the warm runners a start-time target keeps, over
// arrival traces (steady Poisson, a 10x peak, a burst, demand that stops),
// and the verdict its condition says. The traces are generated from a fixed
// seed, and a small queue model plays them: each job takes the runner that is
// online first (waiting for it if none is), and the pool is refilled to the
// sizing's idle buffer plus the job's own runner, as the set's count does.
#include "model/start_time.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "test/unit/arrival_traces.hpp"

namespace octorun::model {
namespace {

using namespace std::chrono_literals;
using namespace traces;

struct played {
  std::vector<double> waits;              // each job's wait for a runner, seconds
  std::vector<std::int32_t> idle_buffer;  // the sizing at each job's arrival
  std::vector<start_time_verdict> verdicts;
  double p95_wait() const {
    auto w = waits;
    std::sort(w.begin(), w.end());
    return w.empty() ? 0 : w[(w.size() * 95 + 99) / 100 - 1];
  }
  // The share of jobs from the `from`th on that waited longer than `target`.
  double share_over(double target, std::size_t from = 0) const {
    const auto n = std::count_if(waits.begin() + static_cast<std::ptrdiff_t>(from), waits.end(),
                                 [&](double w) { return w > target; });
    return static_cast<double>(n) / static_cast<double>(waits.size() - from);
  }
};

// Plays `arrivals` (seconds after t0, ascending) against a variant whose
// runners take `startup` seconds to come online. Jobs run long: every one
// holds its runner to the end of the trace (assigned jobs count as demand).
played play(const std::vector<double>& arrivals, std::int64_t startup, std::int32_t target,
            std::int32_t max_runners = 10'000, std::int32_t min_runners = 0) {
  played out;
  start_time_observations observed;
  std::vector<double> pool;  // online (or coming online) at these times, not taken
  std::int64_t assigned = 0;
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const double t = arrivals[i];
    observed.add_arrival(static_cast<std::int64_t>(i), at(t));
    auto f = facts_at(observed, t, target, max_runners);
    f.startup_p95 = startup;
    f.min_runners = min_runners;
    f.assigned_jobs = assigned;
    const auto s = size_warm_runners(f);
    out.idle_buffer.push_back(s.idle_buffer);
    out.verdicts.push_back(s.verdict);
    // The job's own runner plus the buffer, within maxRunners.
    const auto want = std::min<std::int64_t>(s.idle_buffer + 1, max_runners - assigned);
    while (static_cast<std::int64_t>(pool.size()) < want) pool.push_back(t + static_cast<double>(startup));
    std::sort(pool.begin(), pool.end());
    while (static_cast<std::int64_t>(pool.size()) > std::max<std::int64_t>(want, 1))
      pool.pop_back();  // scale-down takes those not online first
    out.waits.push_back(std::max(0.0, pool.front() - t));
    pool.erase(pool.begin());
    ++assigned;
  }
  return out;
}

TEST(StartTime, PoissonQuantileIsExact) {
  EXPECT_EQ(poisson_quantile(0, 0.95), 0);
  EXPECT_EQ(poisson_quantile(-1, 0.95), 0);
  EXPECT_EQ(poisson_quantile(0.5, 0.95), 2);
  EXPECT_EQ(poisson_quantile(1, 0.95), 3);
  EXPECT_EQ(poisson_quantile(5.5, 0.95), 10);
  EXPECT_EQ(poisson_quantile(10, 0.95), 15);
  EXPECT_EQ(poisson_quantile(100, 0.95), 117);
  EXPECT_EQ(poisson_quantile(1000, 0.95), 1052);  // e^-1000 underflows: summed from the mode
  EXPECT_EQ(poisson_quantile(0.01, 0.5), 0);
}

TEST(StartTime, ThePercentileIsNearestRank) {
  EXPECT_EQ(p95({}), std::nullopt);
  EXPECT_EQ(p95({7}), 7);
  EXPECT_EQ(p95({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}), 19);
}

// Steady Poisson demand (6 jobs a minute), runners online in 60 s, target
// 5 s: the rule keeps about 11 runners warm (Poisson(0.1 * 55) at 95 % is
// 10, plus the arriving job's), and once the pool is up fewer than 5 % of
// the jobs wait past the target. The first jobs find a cold pool. Without
// warm runners every job waits the start-up.
TEST(StartTime, SteadyPoissonDemandMeetsTheTarget) {
  std::mt19937 gen(34);
  std::vector<double> arrivals;
  poisson(arrivals, gen, 0.1, 0, 2 * 3600);
  ASSERT_GT(arrivals.size(), 600u);
  const auto p = play(arrivals, 60, 5);
  const auto warm = static_cast<std::size_t>(std::lower_bound(arrivals.begin(), arrivals.end(), 900.0) -
                                             arrivals.begin());  // after 15 minutes
  EXPECT_LT(p.share_over(5, warm), 0.05);
  EXPECT_LE(p.p95_wait(), 10.0);
  // Once the window is full the buffer sits near the rule's 11.
  const auto late = std::vector<std::int32_t>(p.idle_buffer.end() - 100, p.idle_buffer.end());
  EXPECT_GE(*std::min_element(late.begin(), late.end()), 8);
  EXPECT_LE(*std::max_element(late.begin(), late.end()), 18);
  EXPECT_EQ(p.verdicts.back(), start_time_verdict::met);

  const auto cold = play(arrivals, 60, 60);  // start-up within the target: nothing kept warm
  EXPECT_EQ(*std::max_element(cold.idle_buffer.begin(), cold.idle_buffer.end()), 0);
  EXPECT_GT(cold.share_over(5), 0.9);
}

// A 10x peak (1 job a minute, 10 a minute for 20 minutes, 1 a minute): the
// warm pool grows with the peak within a few minutes, and shrinks back once
// the peak has left the window.
TEST(StartTime, ATenfoldPeakGrowsThePoolAndItShrinksAfter) {
  std::mt19937 gen(7);
  std::vector<double> arrivals;
  poisson(arrivals, gen, 1.0 / 60, 0, 1800);
  const auto peak_from = arrivals.size();
  poisson(arrivals, gen, 10.0 / 60, 1800, 3000);
  const auto peak_to = arrivals.size();
  poisson(arrivals, gen, 1.0 / 60, 3000, 5400);
  const auto p = play(arrivals, 60, 5);
  const auto before = p.idle_buffer[peak_from - 1];
  const auto during = p.idle_buffer[peak_to - 1];
  EXPECT_LE(before, 6);
  EXPECT_GE(during, 12);
  EXPECT_LE(p.idle_buffer.back(), 6);
  // The short window catches the ramp within a minute or two: the jobs of
  // the peak's first minute wait, nearly all others start within the target.
  EXPECT_LT(p.share_over(5), 0.10);
}

// A burst of 200 jobs at once: 200 runners are demand. The short window's
// rate (200 in 2 minutes) keeps 109 warm on top for two minutes, the long
// window's (200 in 10) 27 for the rest of the ten; a maxRunners that cannot
// hold them says so.
TEST(StartTime, ABurstSizesThePoolWithinMaxRunners) {
  start_time_observations observed;
  for (int i = 0; i < 200; ++i) observed.add_arrival(i, at(0));
  start_time_facts f;
  f.target_p95_seconds = 5;
  f.now = at(1);
  f.observing_since = t0 - 1h;
  f.observed = &observed;
  f.startup_p95 = 60;
  f.max_runners = 400;
  f.assigned_jobs = 200;
  auto s = size_warm_runners(f);
  EXPECT_EQ(s.arrivals, 200);
  EXPECT_EQ(s.wanted, 109);  // Poisson(200 / 120 * 55) at 95 %: 108, plus one
  EXPECT_EQ(s.idle_buffer, 109);
  EXPECT_EQ(s.verdict, start_time_verdict::met);
  f.now = at(121);
  s = size_warm_runners(f);
  EXPECT_EQ(s.wanted, 27);  // Poisson(200 / 600 * 55) at 95 %: 26, plus one
  f.max_runners = 210;
  s = size_warm_runners(f);
  EXPECT_EQ(s.idle_buffer, 27) << "the set's count clamps the total, not the buffer";
  EXPECT_EQ(s.verdict, start_time_verdict::max_runners_too_low);
  EXPECT_EQ(reason_of(s.verdict), "MaxRunnersTooLow");
  EXPECT_EQ(status_of(s.verdict), "False");
  EXPECT_NE(describe(s).find("raise maxRunners, or the target"), std::string::npos) << describe(s);
}

// Demand that stops: the pool drains to minRunners once the last job has
// left the window, and the sizing says when to look again.
TEST(StartTime, DemandThatStopsDrainsToMinRunners) {
  start_time_observations observed;
  for (int i = 0; i < 30; ++i) observed.add_arrival(i, at(i * 20.0));
  const auto last = at(29 * 20.0);
  start_time_facts f;
  f.target_p95_seconds = 5;
  f.observing_since = t0;
  f.observed = &observed;
  f.startup_p95 = 60;
  f.min_runners = 1;
  f.max_runners = 20;
  f.now = last + 9min;
  auto s = size_warm_runners(f);
  EXPECT_GT(s.idle_buffer, 1);
  ASSERT_TRUE(s.next_change);
  EXPECT_LT(*s.next_change, last + 10min);
  f.now = last + 10min;
  s = size_warm_runners(f);
  EXPECT_EQ(s.wanted, 0);
  EXPECT_EQ(s.idle_buffer, 1);
  EXPECT_EQ(s.verdict, start_time_verdict::no_recent_jobs);
  EXPECT_EQ(status_of(s.verdict), "True");
  EXPECT_EQ(s.next_change, std::nullopt);
  // What left the window is forgotten.
  observed.forget_before(f.now - 10min);
  EXPECT_TRUE(observed.empty());
}

TEST(StartTime, NoWarmRunnersWhileAColdStartMeetsTheTargetOrNoneCameOnline) {
  start_time_observations observed;
  observed.add_arrival(1, at(0));
  observed.add_arrival(2, at(10));
  auto f = facts_at(observed, 20, 30, 10);
  f.startup_p95 = 30;
  auto s = size_warm_runners(f);
  EXPECT_EQ(s.wanted, 0);
  EXPECT_EQ(s.verdict, start_time_verdict::met);
  EXPECT_NE(describe(s).find("within the target: none is kept warm"), std::string::npos) << describe(s);
  f.startup_p95.reset();
  s = size_warm_runners(f);
  EXPECT_EQ(s.wanted, 0);
  EXPECT_EQ(s.verdict, start_time_verdict::startup_unobserved);
  EXPECT_EQ(status_of(s.verdict), "Unknown");
}

// The observed queued -> started p95 judges the target: over it is a miss
// (the pool may still be growing), within it is met.
TEST(StartTime, TheObservedPercentileJudgesTheTarget) {
  start_time_observations observed;
  observed.add_arrival(1, at(0));
  EXPECT_TRUE(observed.add_job_start(1, 62, at(62)));
  EXPECT_FALSE(observed.add_job_start(1, 62, at(63))) << "once per job";
  start_time_facts f;
  f.target_p95_seconds = 5;
  f.now = at(70);
  f.observing_since = t0;
  f.observed = &observed;
  f.startup_p95 = 60;
  f.max_runners = 100;
  auto s = size_warm_runners(f);
  EXPECT_EQ(s.observed_p95, 62);
  EXPECT_EQ(s.verdict, start_time_verdict::missed);
  EXPECT_EQ(reason_of(s.verdict), "TargetMissed");
  for (int i = 2; i < 40; ++i) {
    observed.add_arrival(i, at(60 + i));
    observed.add_job_start(i, 1, at(60 + i));
  }
  f.now = at(100);
  s = size_warm_runners(f);
  EXPECT_EQ(s.observed_p95, 1);
  EXPECT_EQ(s.verdict, start_time_verdict::met);
  EXPECT_GT(s.wanted, 0);
  EXPECT_NE(describe(s).find("Jobs started within 1 s of being queued"), std::string::npos) << describe(s);
}

// A new leader (or a new set) takes the rate over what it observed, but
// never over less than a minute; a job heard twice counts once.
TEST(StartTime, AShortObservationTakesItsRateOverAtLeastAMinute) {
  start_time_observations observed;
  EXPECT_TRUE(observed.add_arrival(1, at(0)));
  EXPECT_FALSE(observed.add_arrival(1, at(1))) << "JobAvailable then JobAssigned: one arrival";
  EXPECT_TRUE(observed.add_arrival(2, at(1)));
  start_time_facts f;
  f.target_p95_seconds = 5;
  f.observed = &observed;
  f.startup_p95 = 65;
  f.max_runners = 10;
  f.observing_since = at(-10);
  f.now = at(2);
  auto s = size_warm_runners(f);
  EXPECT_DOUBLE_EQ(s.arrivals_per_minute, 2.0);  // over the minute, not the 12 s observed
  f.observing_since = at(-598);
  s = size_warm_runners(f);
  EXPECT_DOUBLE_EQ(s.arrivals_per_minute, 1.0);  // the short window's 2 in 2 minutes, over the long one's
  EXPECT_EQ(s.wanted, poisson_quantile(1.0 / 60 * 60, 0.95) + 1);
}

TEST(StartTime, TheBufferStaysBetweenMinAndMaxRunners) {
  start_time_observations observed;
  for (int i = 0; i < 100; ++i) observed.add_arrival(i, at(i));
  start_time_facts f;
  f.target_p95_seconds = 1;
  f.now = at(100);
  f.observing_since = t0 - 1h;
  f.observed = &observed;
  f.startup_p95 = 3600;
  f.min_runners = 2;
  f.max_runners = 5;
  auto s = size_warm_runners(f);
  EXPECT_EQ(s.idle_buffer, 5);
  EXPECT_EQ(s.verdict, start_time_verdict::max_runners_too_low);
  f.startup_p95 = 1;
  s = size_warm_runners(f);
  EXPECT_EQ(s.idle_buffer, 2);
}

}  // namespace
}  // namespace octorun::model
