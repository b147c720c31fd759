// Arrival traces for the start-time rules' tests (model/start_time.hpp):
// times as seconds after a fixed start, and Poisson arrivals generated from a
// fixed seed, the same on every platform.
#pragma once

#include <chrono>
#include <cmath>
#include <random>
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

}  // namespace octorun::model::traces
