// When each job of a run is queued and how long it runs: pure and seeded, so
// a profile gives the same jobs every time.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "bench/loadtest/options.hpp"

namespace octorun::loadtest {

struct planned_job {
  double at_s = 0;  // seconds after the start
  std::int64_t duration_ms = 0;
};

// burst: every job at 0. steady: one job each 1/rate s over the duration.
// poisson: arrivals at `rate` on average over the duration, the gaps drawn
// (exponential) from the seed. bursts: `jobs` at once every `every` within
// the duration, the first at 0. ramp: the rate grows linearly from rate_from to rate_to; the n-th job comes
// when the integral of the rate reaches n. workday: `jobs` arrivals spread
// over the hours of a working day (workday_hourly_weights) compressed into
// the duration, each at a seeded place within its share. workday_poisson:
// the same day's rate (`jobs` on average), the arrivals a non-homogeneous
// Poisson process drawn from the seed, so hours vary as real ones do.
// Durations are drawn from `d`, the same for a seed whatever the profile.
std::vector<planned_job> plan_jobs(const profile& p, const distribution& d, std::uint64_t seed);

// The share of a working day's jobs that arrives in each of its hours,
// 07:00-19:00: quiet at both ends, a morning peak, a dip at lunch, an
// afternoon peak; the busiest hour has 10 times the quietest one's arrivals
// (issue 34's working-day trace).
const std::vector<double>& workday_hourly_weights();

// One draw from `d`, in whole milliseconds, never negative.
std::int64_t draw_ms(const distribution& d, std::mt19937_64& rng);

}  // namespace octorun::loadtest
