// Capped exponential backoff with jitter: the one implementation every retry
// loop uses (Kubernetes informers, GitHub calls, supervisor restarts, Runner
// actor retries, pod recreation). Pure: the caller supplies the random value.
//
// Convention: attempt n (from 0) waits d = min(initial * factor^n, cap), then
// scaled by a factor drawn linearly from the jitter band [low, high] by
// `random01` (0 -> low, 1 -> high), and never past `cap`: the cap is a
// promise to operators. The default band [1, 1] means no jitter.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>

namespace octorun {

struct jitter_band {
  double low = 1.0;   // fraction of the delay when random01 = 0
  double high = 1.0;  // fraction of the delay when random01 = 1
};

// "Equal jitter": half fixed, half random (never longer than the delay).
inline constexpr jitter_band equal_jitter{0.5, 1.0};

// Spread a delay downwards by `fraction`: [(1 - fraction) * d, d].
constexpr jitter_band jitter_below(double fraction) { return {1.0 - std::clamp(fraction, 0.0, 1.0), 1.0}; }

// Spread a delay both ways by `fraction`: [(1 - fraction) * d, (1 + fraction) * d].
constexpr jitter_band jitter_around(double fraction) { return {1.0 - fraction, 1.0 + fraction}; }

template <class Duration>
struct exponential_backoff {
  Duration initial{};
  Duration cap{};
  double factor = 2.0;
  jitter_band jitter{};

  // The wait before attempt `attempt` (0 for the first retry); `random01` is
  // uniform in [0, 1] (clamped).
  Duration delay(int attempt, double random01 = 0.0) const {
    const double exponent = std::clamp(attempt, 0, 62);
    const double limit = static_cast<double>(cap.count());
    const double base = std::min(static_cast<double>(initial.count()) * std::pow(factor, exponent), limit);
    const double scale = jitter.low + (jitter.high - jitter.low) * std::clamp(random01, 0.0, 1.0);
    return Duration(static_cast<typename Duration::rep>(std::max(0.0, std::min(base * scale, limit))));
  }
};

}  // namespace octorun
