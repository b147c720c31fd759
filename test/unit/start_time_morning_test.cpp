// model/start_time.hpp from nothing: a variant that has seen no start-up yet
// (a new set, or the first morning of a new manager) meets a ramp of jobs.
// The queue model of start_time_test.cpp, but the rule learns the start-up as
// runners come online, and the set plans at every arrival and again whenever
// the sizing asks to look again (next_change), as the actor's wake does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "model/start_time.hpp"
#include "test/unit/arrival_traces.hpp"

namespace octorun::model {
namespace {

using namespace std::chrono_literals;
using namespace traces;

struct runner {
  double created = 0;
  double online = 0;
};

struct morning {
  std::vector<double> waits;  // each job's wait for a runner, seconds
  std::int64_t runners = 0;   // made in all
  std::size_t over(double target) const {
    return static_cast<std::size_t>(
        std::count_if(waits.begin(), waits.end(), [&](double w) { return w > target; }));
  }
};

// Plays `arrivals` against runners that take `startup` seconds to come
// online, with the rule told only what the set can know: the start-ups of
// runners that came online (the p95 once there are five), and, when
// `bound_from_starting`, how long the oldest runner still starting has been
// starting while there are fewer. Jobs run past the trace's end.
morning play_from_nothing(const std::vector<double>& arrivals, double startup, std::int32_t target,
                          bool bound_from_starting) {
  const start_time_rule rule;
  morning out;
  start_time_observations observed;
  std::vector<runner> made;  // every runner, taken or not
  std::vector<runner> pool;  // not taken yet
  std::int64_t online_seen = 0, assigned = 0;
  std::size_t next_job = 0;
  std::optional<double> recheck;
  auto sizing = [&](double t) {
    auto f = facts_at(observed, t, target, 10'000);
    if (online_seen > 0) f.startup_p95 = static_cast<std::int64_t>(startup);
    if (bound_from_starting && online_seen < 5) {
      for (const auto& r : made)
        if (r.online > t)
          f.starting_for = std::max(f.starting_for.value_or(0), static_cast<std::int64_t>(t - r.created));
    }
    f.assigned_jobs = assigned;
    return size_warm_runners(f, rule);
  };
  while (next_job < arrivals.size()) {
    const bool arrival = !recheck || arrivals[next_job] <= *recheck;
    const double t = arrival ? arrivals[next_job] : *recheck;
    // Runners that came online by now are start-up samples.
    online_seen = std::count_if(made.begin(), made.end(), [&](const runner& r) { return r.online <= t; });
    if (arrival) observed.add_arrival(static_cast<std::int64_t>(next_job), at(t));
    const auto s = sizing(t);
    const auto want = s.idle_buffer + (arrival ? 1 : 0);
    while (static_cast<std::int64_t>(pool.size()) < want) {
      pool.push_back({t, t + startup});
      made.push_back(pool.back());
      ++out.runners;
    }
    if (arrival) {
      std::sort(pool.begin(), pool.end(),
                [](const runner& a, const runner& b) { return a.online < b.online; });
      out.waits.push_back(std::max(0.0, pool.front().online - t));
      pool.erase(pool.begin());
      ++assigned;
      ++next_job;
    }
    recheck.reset();
    if (s.next_change && *s.next_change < at(t) + rule.window)
      recheck = t + std::chrono::duration<double>(*s.next_change - at(t)).count();
  }
  return out;
}

// The first quarter of a working day compressed into 12 minutes: 1, 2.3, 5
// and 5.3 jobs a minute for three minutes each, runners online in 85 s (a
// node, a cold image pull, the runner), a 5 s target. Without a bound the
// set sizes nothing until its first runner is online, and the pool it then
// asks for takes another start-up; the starting runner's wait lets it grow
// the pool from the first seconds. (What is left is the ramp itself: a rate
// that keeps rising outruns a pool sized from the rate observed so far.)
TEST(StartTimeFromNothing, AStartingRunnerSizesThePoolBeforeAnyCameOnline) {
  std::mt19937 gen(34);
  std::vector<double> arrivals;
  const double per_minute[] = {1, 2.3, 5, 5.3};
  for (int i = 0; i < 4; ++i) poisson(arrivals, gen, per_minute[i] / 60, i * 180.0, (i + 1) * 180.0);
  ASSERT_GT(arrivals.size(), 30u);
  const auto unbounded = play_from_nothing(arrivals, 85, 5, false);
  const auto bounded = play_from_nothing(arrivals, 85, 5, true);
  // The first job waits the whole start either way: nothing knew it would come.
  EXPECT_DOUBLE_EQ(bounded.waits.front(), 85);
  EXPECT_DOUBLE_EQ(unbounded.waits.front(), 85);
  // The jobs of the first two start-ups after it: without the bound all of
  // them wait for runners made after the first came online.
  const double morning_end = arrivals.front() + 2 * 85;
  double waited = 0, waited_unbounded = 0, later = 0, later_unbounded = 0;
  std::size_t over = 0, over_unbounded = 0;
  for (std::size_t i = 1; i < arrivals.size(); ++i) {
    if (arrivals[i] < morning_end) {
      waited += bounded.waits[i];
      waited_unbounded += unbounded.waits[i];
      over += bounded.waits[i] > 5 ? 1 : 0;
      over_unbounded += unbounded.waits[i] > 5 ? 1 : 0;
    } else {
      later += bounded.waits[i];
      later_unbounded += unbounded.waits[i];
    }
  }
  ASSERT_GE(over_unbounded, 4u);
  EXPECT_LT(over, over_unbounded);
  EXPECT_LT(waited, 0.6 * waited_unbounded);
  EXPECT_LE(later, later_unbounded) << "and nothing later waits longer for it";
  // It costs no more runners over the ramp.
  EXPECT_LE(bounded.runners, unbounded.runners + 2);
}

// A start-up within the target keeps nothing warm, bound or not: a runner
// starting for less than the target says nothing against it.
TEST(StartTimeFromNothing, AStartWithinTheTargetKeepsNothingWarm) {
  std::mt19937 gen(7);
  std::vector<double> arrivals;
  poisson(arrivals, gen, 5.0 / 60, 0, 600);
  const auto p = play_from_nothing(arrivals, 4, 5, true);
  EXPECT_EQ(p.runners, static_cast<std::int64_t>(arrivals.size()));
  EXPECT_EQ(p.over(5), 0u);
}

// What the sizing says while it sizes from a starting runner, and that it
// asks to be looked at again.
TEST(StartTimeFromNothing, TheConditionSaysTheBoundAndTheSetLooksAgain) {
  start_time_observations observed;
  observed.add_arrival(1, at(0));
  auto f = facts_at(observed, 30, 5, 10);
  f.starting_for = 30;
  auto s = size_warm_runners(f);
  EXPECT_EQ(s.sized_startup, 30);
  EXPECT_EQ(s.wanted, poisson_quantile(1.0 / 60 * 25, 0.95) + 1);
  EXPECT_EQ(s.verdict, start_time_verdict::startup_unobserved) << "no runner came online yet";
  EXPECT_EQ(s.next_change, at(35));
  EXPECT_NE(describe(s).find("one has been starting for 30 s (a start-up takes at least that): "),
            std::string::npos)
      << describe(s);
  // Samples that say more win; a shorter wait than they say changes nothing.
  f.startup_p95 = 60;
  s = size_warm_runners(f);
  EXPECT_EQ(s.sized_startup, 60);
  EXPECT_EQ(s.next_change, at(600)) << "only the window's end";
  // At maxRunners there is nothing more to grow: no need to look again.
  f.startup_p95.reset();
  f.max_runners = 1;
  s = size_warm_runners(f);
  EXPECT_EQ(s.next_change, at(600));
}

}  // namespace
}  // namespace octorun::model
