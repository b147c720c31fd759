// model/start_time.hpp: the 5 % as a budget over the window. The waits of
// the jobs that started in the window leave the jobs still to come a smaller
// share (remaining_wait_allowance), never below a fifth of the 5 %; a window
// without waits sizes as before.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "model/start_time.hpp"
#include "test/unit/arrival_traces.hpp"

namespace octorun::model {
namespace {

using namespace traces;

TEST(RemainingWaitAllowance, WhatTheWindowSpentComesOffTheNextOnes) {
  // No wait in the window: the whole 5 %.
  EXPECT_DOUBLE_EQ(remaining_wait_allowance(100, 0, 100, 0.05, 0.2), 0.05);
  // 7 of 100 waited: 200 jobs may have 10 waits, 3 are left for the next 100.
  EXPECT_NEAR(remaining_wait_allowance(100, 7, 100, 0.05, 0.2), 0.03, 1e-12);
  // Spent, or overspent: a fifth of the 5 %, however many waited.
  EXPECT_NEAR(remaining_wait_allowance(100, 10, 100, 0.05, 0.2), 0.01, 1e-12);
  EXPECT_NEAR(remaining_wait_allowance(5, 5, 10, 0.05, 0.2), 0.01, 1e-12);
  // An unspent budget is not spent: never more than the 5 %.
  EXPECT_DOUBLE_EQ(remaining_wait_allowance(1000, 0, 10, 0.05, 0.2), 0.05);
  // No arrival expected, or the budget off (min_share 1): the 5 %.
  EXPECT_DOUBLE_EQ(remaining_wait_allowance(100, 50, 0, 0.05, 0.2), 0.05);
  EXPECT_DOUBLE_EQ(remaining_wait_allowance(100, 50, 100, 0.05, 1.0), 0.05);
}

// 60 jobs in the last 10 minutes, runners online in 60 s, target 5 s.
start_time_facts steady(start_time_observations& observed, std::int64_t waited) {
  for (int i = 0; i < 60; ++i) {
    observed.add_arrival(i, at(10.0 * i + 5));
    observed.add_job_start(i, i < waited ? 30 : 0, at(10.0 * i + 6));
  }
  auto f = facts_at(observed, 600, 5, 40);
  f.startup_p95 = 60;
  f.startups = {60};
  return f;
}

TEST(StartTimeBudget, WaitsInTheWindowKeepMoreWarmUpToTheNinetyNinthPercentile) {
  start_time_rule rule;  // the Poisson count alone: 60 arrivals this even would be replayed
  rule.min_replayed = 1'000'000;
  const double rate = 0.1;  // 60 jobs over 10 minutes, and 12 over the last 2
  start_time_observations clean, some, all;
  const auto none = size_warm_runners(steady(clean, 0), rule);
  EXPECT_EQ(none.started, 60);
  EXPECT_EQ(none.waited, 0);
  EXPECT_NEAR(none.wait_allowance, 0.05, 1e-12);
  EXPECT_EQ(none.wanted, warm_runners_for({60}, rate, 5, 0.95));
  // 4 of 60 waited: (0.05 · 120 - 4) / 60 of the next 60 may.
  const auto four = size_warm_runners(steady(some, 4), rule);
  EXPECT_EQ(four.waited, 4);
  EXPECT_NEAR(four.wait_allowance, 2.0 / 60, 1e-9);
  EXPECT_EQ(four.wanted, warm_runners_for({60}, rate, 5, 1 - 2.0 / 60));
  EXPECT_GE(four.wanted, none.wanted);
  // Every job waited: the count of the 99th percentile, two more than the
  // 95th's here; not a count of the waits.
  const auto every = size_warm_runners(steady(all, 60), rule);
  EXPECT_NEAR(every.wait_allowance, 0.01, 1e-12);
  EXPECT_EQ(every.wanted, warm_runners_for({60}, rate, 5, 0.99));
  EXPECT_EQ(every.wanted, none.wanted + 2);
  // The condition says why.
  EXPECT_NE(describe(every).find("60 of the 60 jobs started in the last 10 min waited past the target"),
            std::string::npos)
      << describe(every);
  EXPECT_EQ(describe(none).find("waited past the target"), std::string::npos);
  // maxRunners bounds it as ever.
  start_time_observations bounded;
  auto f = steady(bounded, 60);
  f.max_runners = 3;
  EXPECT_EQ(size_warm_runners(f, rule).idle_buffer, 3);
  // The budget off: every moment within the 5 %, as before.
  rule.min_allowance_share = 1;
  start_time_observations again;
  EXPECT_EQ(size_warm_runners(steady(again, 60), rule).wanted, none.wanted);
}

// A cold morning as the load test's Poisson trace has it: 6 jobs a minute
// from the start, the first 12 runners 90 s from online (no node yet), then
// 4-12 s, target 5 s. The morning's waits spend the window's budget: the
// minutes after it are held to a stricter share, never past the 99th
// percentile, at a bounded cost; once the morning left the window (and no
// later job waited) the 5 % holds again. (Whether the stricter share saves
// the window's p95 is the load test's to say: this queue model's waits
// after the morning are too few to tell.)
TEST(StartTimeBudget, AColdMorningIsRepaidWithinTheWindowAtABoundedCost) {
  double idle = 0, idle_without = 0;
  for (std::uint32_t seed = 3437; seed < 3447; ++seed) {
    std::mt19937 gen(seed);
    std::vector<double> arrivals;
    poisson(arrivals, gen, 0.1, 0, 1200);
    std::vector<std::int64_t> draws(12, 90);
    std::uniform_int_distribution<std::int64_t> startup(4, 12);
    for (int i = 0; i < 2000; ++i) draws.push_back(startup(gen));
    start_time_rule off;
    off.min_allowance_share = 1;
    const auto budget = play(arrivals, draws, start_time_rule{}, true, true);
    const auto each_moment = play(arrivals, draws, off, true, true);
    const auto morning = static_cast<std::size_t>(std::lower_bound(arrivals.begin(), arrivals.end(), 120.0) -
                                                  arrivals.begin());
    ASSERT_GE(std::count_if(budget.waits.begin(), budget.waits.begin() + static_cast<std::ptrdiff_t>(morning),
                            [](double w) { return w > 5; }),
              3)
        << "seed " << seed << ": the morning spends the budget";
    bool tightened = false;
    for (std::size_t i = morning; i < arrivals.size(); ++i) {
      const auto& s = budget.sizings[i];
      EXPECT_GE(s.wait_allowance, 0.01 - 1e-12);
      EXPECT_LE(s.wait_allowance, 0.05 + 1e-12);
      if (arrivals[i] < 600 && s.wait_allowance < 0.05 - 1e-9) tightened = true;
      if (s.waited == 0) {
        EXPECT_NEAR(s.wait_allowance, 0.05, 1e-12) << "seed " << seed << ", job " << i;
      }
      EXPECT_NEAR(each_moment.sizings[i].wait_allowance, 0.05, 1e-12);
    }
    EXPECT_TRUE(tightened) << "seed " << seed;
    idle += budget.idle_buffer_sum;
    idle_without += each_moment.idle_buffer_sum;
  }
  EXPECT_GT(idle, idle_without);
  EXPECT_LT(idle, 1.3 * idle_without) << "the 99th percentile for a window, not a panic count";
}

}  // namespace
}  // namespace octorun::model
