// Arrival traces for the start-time rules' tests (model/start_time.hpp):
// times as seconds after a fixed start, and Poisson arrivals generated from a
// fixed seed, the same on every platform.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <random>
#include <utility>
#include <vector>

#include "model/start_time.hpp"

namespace octorun::model::traces {

using clock_duration = std::chrono::steady_clock::duration;

inline const steady_time t0 = steady_time{} + std::chrono::hours(24);

inline steady_time at(double seconds) {
  return t0 + std::chrono::duration_cast<clock_duration>(std::chrono::duration<double>(seconds));
}

// Poisson arrivals at `per_second` from `from` to `to` (seconds after t0), by
// inverse transform of mt19937's raw output (the same on every platform).
inline void poisson(std::vector<double>& out, std::mt19937& gen, double per_second, double from, double to) {
  for (double t = from;;) {
    const double u = (static_cast<double>(gen()) + 0.5) / 4294967296.0;
    t += -std::log(u) / per_second;
    if (t >= to) return;
    out.push_back(t);
  }
}

// The facts of a variant observed since t0, `now` seconds after it, with a
// target and a maxRunners (the rest as a test sets them).
inline start_time_facts facts_at(const start_time_observations& observed, double now, std::int32_t target,
                                 std::int32_t max_runners) {
  start_time_facts f;
  f.target_p95_seconds = target;
  f.now = at(now);
  f.observing_since = t0;
  f.observed = &observed;
  f.max_runners = max_runners;
  return f;
}

// What a trace played against runners gave: each job's wait for its runner
// and the warm pool the rule kept at each arrival.
struct played {
  std::vector<double> waits;
  double idle_buffer_sum = 0;              // the idle buffer at each arrival, summed
  std::vector<start_time_sizing> sizings;  // the rule's at each arrival
  // The share of the jobs from the `from`-th on that waited past `target`.
  double share_over(double target, std::size_t from) const {
    const auto n = std::count_if(waits.begin() + static_cast<std::ptrdiff_t>(from), waits.end(),
                                 [&](double w) { return w > target; });
    return static_cast<double>(n) / static_cast<double>(waits.size() - from);
  }
};

// Plays `arrivals` (ascending seconds) against runners whose start-ups are
// the next of `draws`, target 5 s: the rule sees every arrival and, where
// `over_startups`, the newest 50 start-ups (else their p95 alone); where
// `observe_starts`, each job's wait too once the job started (the budget
// over the window). Each job takes the runner that comes online first; jobs
// hold their runners (assigned jobs count as demand).
inline played play(const std::vector<double>& arrivals, const std::vector<std::int64_t>& draws,
                   const start_time_rule& rule, bool over_startups = true, bool observe_starts = false) {
  played out;
  start_time_observations observed;
  std::deque<std::int64_t> seen;
  std::vector<double> pool;
  std::vector<std::pair<double, std::size_t>> starting;  // (started at, job), not yet heard
  std::size_t next = 0;
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const double t = arrivals[i];
    std::sort(starting.begin(), starting.end());
    auto heard = starting.begin();
    for (; heard != starting.end() && heard->first <= t; ++heard)
      observed.add_job_start(static_cast<std::int64_t>(heard->second),
                             static_cast<std::int64_t>(std::ceil(out.waits[heard->second])), at(heard->first),
                             rule);
    starting.erase(starting.begin(), heard);
    observed.add_arrival(static_cast<std::int64_t>(i), at(t), rule);
    observed.forget_before(at(t) - rule.window);
    auto f = facts_at(observed, t, 5, 10'000);
    f.startup_p95 = p95(seen);
    if (over_startups) f.startups.assign(seen.begin(), seen.end());
    f.assigned_jobs = static_cast<std::int64_t>(i);
    const auto s = size_warm_runners(f, rule);
    out.idle_buffer_sum += static_cast<double>(s.idle_buffer);
    out.sizings.push_back(s);
    while (static_cast<std::int64_t>(pool.size()) < s.idle_buffer + 1) {
      const auto startup = draws[next++ % draws.size()];
      pool.push_back(t + static_cast<double>(startup));
      seen.push_back(startup);
      if (seen.size() > 50) seen.pop_front();
    }
    std::sort(pool.begin(), pool.end());
    while (static_cast<std::int64_t>(pool.size()) > s.idle_buffer + 1) pool.pop_back();
    out.waits.push_back(std::max(0.0, pool.front() - t));
    if (observe_starts) starting.emplace_back(t + out.waits.back(), i);
    pool.erase(pool.begin());
  }
  return out;
}

}  // namespace octorun::model::traces
