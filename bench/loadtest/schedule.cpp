#include "bench/loadtest/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace octorun::loadtest {

std::int64_t draw_ms(const distribution& d, std::mt19937_64& rng) {
  double ms = 0;
  switch (d.shape) {
    case distribution::kind::fixed:
      ms = d.a;
      break;
    case distribution::kind::uniform:
      ms = std::uniform_real_distribution<double>(d.a, d.b)(rng);
      break;
    case distribution::kind::exponential:
      ms = d.a > 0 ? std::exponential_distribution<double>(1 / d.a)(rng) : 0;
      break;
    case distribution::kind::lognormal:
      ms = d.a > 0 ? std::lognormal_distribution<double>(std::log(d.a), d.b)(rng) : 0;
      break;
  }
  return static_cast<std::int64_t>(std::llround(std::max(0.0, ms)));
}

const std::vector<double>& workday_hourly_weights() {
  static const std::vector<double> weights = {1, 3, 7, 10, 9, 6, 7, 9, 8, 5, 2, 1};
  return weights;
}

namespace {

// The n-th of `jobs` arrivals at the inverse of the day's cumulative
// arrivals at (n + u) / jobs, u uniform in [0, 1): every hour gets its
// share to within one job, and the seed moves each job within its place.
std::vector<double> workday_arrivals(int jobs, double seconds, std::uint64_t seed) {
  const auto& weights = workday_hourly_weights();
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  const double hour_s = seconds / static_cast<double>(weights.size());
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);  // not the durations' stream
  std::uniform_real_distribution<double> within(0, 1);
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(jobs));
  std::size_t hour = 0;
  double before = 0;  // the share of the day before `hour`
  for (int n = 0; n < jobs; ++n) {
    const double share = (n + within(rng)) / jobs;
    while (hour + 1 < weights.size() && share >= before + weights[hour] / total)
      before += weights[hour++] / total;
    const double into = std::min(1.0, (share - before) / (weights[hour] / total));
    out.push_back((static_cast<double>(hour) + into) * hour_s);
  }
  return out;
}

// The same day's rate, each hour's arrivals a Poisson process: a stream of
// the peak hour's rate, each arrival kept with its hour's share of the peak
// (thinning). Real demand comes in clumps and gaps that the stratified day
// above smooths away; a warm pool sized on the one may not hold on the
// other. A stream of its own, so the durations stay those of the seed.
std::vector<double> workday_poisson_arrivals(int jobs, double seconds, std::uint64_t seed) {
  const auto& weights = workday_hourly_weights();
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  const double peak = *std::max_element(weights.begin(), weights.end());
  const double hour_s = seconds / static_cast<double>(weights.size());
  const double peak_rate = jobs * peak / total / hour_s;  // jobs/s in the busiest hour
  std::mt19937_64 rng(seed ^ 0x165667b19e3779f9ULL);      // neither the durations' nor the gaps' stream
  std::exponential_distribution<double> gap(peak_rate);
  std::uniform_real_distribution<double> keep(0, 1);
  std::vector<double> out;
  for (double t = gap(rng); t < seconds; t += gap(rng)) {
    const auto hour = std::min(weights.size() - 1, static_cast<std::size_t>(t / hour_s));
    if (keep(rng) < weights[hour] / peak) out.push_back(t);
  }
  return out;
}

}  // namespace

std::vector<planned_job> plan_jobs(const profile& p, const distribution& d, std::uint64_t seed) {
  std::vector<double> arrivals;
  const double seconds = std::chrono::duration<double>(p.duration).count();
  switch (p.shape) {
    case profile::kind::burst:
      arrivals.assign(static_cast<size_t>(p.jobs), 0.0);
      break;
    case profile::kind::steady:
      for (int n = 0; n / p.rate < seconds - 1e-9; ++n) arrivals.push_back(n / p.rate);
      break;
    case profile::kind::poisson: {
      // Exponential gaps of mean 1/rate, from a stream of their own so the
      // durations drawn below stay those of the same seed's other profiles.
      std::mt19937_64 gaps(seed ^ 0xc2b2ae3d27d4eb4fULL);
      std::exponential_distribution<double> gap(p.rate);
      for (double t = 0; t < seconds; t += gap(gaps)) arrivals.push_back(t);
      break;
    }
    case profile::kind::bursts: {
      const double every = std::chrono::duration<double>(p.every).count();
      for (double t = 0; t < seconds - 1e-9; t += every)
        arrivals.insert(arrivals.end(), static_cast<size_t>(p.jobs), t);
      break;
    }
    case profile::kind::ramp: {
      // jobs by time t: r0 t + (r1 - r0) t^2 / (2 T); solve for the n-th.
      const double r0 = p.rate_from, slope = (p.rate_to - p.rate_from) / seconds;
      const double total = r0 * seconds + slope * seconds * seconds / 2;
      for (int n = 0; n < static_cast<int>(std::floor(total + 1e-9)); ++n) {
        double t = std::abs(slope) < 1e-12 ? n / r0 : (-r0 + std::sqrt(r0 * r0 + 2 * slope * n)) / slope;
        arrivals.push_back(t);
      }
      break;
    }
    case profile::kind::workday:
      arrivals = workday_arrivals(p.jobs, seconds, seed);
      break;
    case profile::kind::workday_poisson:
      arrivals = workday_poisson_arrivals(p.jobs, seconds, seed);
      break;
  }
  std::mt19937_64 rng(seed);
  std::vector<planned_job> out;
  out.reserve(arrivals.size());
  for (double t : arrivals) out.push_back({t, draw_ms(d, rng)});
  return out;
}

}  // namespace octorun::loadtest
