#include "bench/loadtest/schedule.hpp"

#include <algorithm>
#include <cmath>
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
  }
  std::mt19937_64 rng(seed);
  std::vector<planned_job> out;
  out.reserve(arrivals.size());
  for (double t : arrivals) out.push_back({t, draw_ms(d, rng)});
  return out;
}

}  // namespace octorun::loadtest
