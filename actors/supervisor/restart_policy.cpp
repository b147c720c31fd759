#include "actors/supervisor/restart_policy.hpp"

#include <algorithm>
#include <cmath>

namespace octorun::supervision {

duration next_restart_delay(const restart_policy& policy, restart_history& history, duration uptime,
                            double random01) {
  if (uptime >= policy.healthy_after) history.consecutive_failures = 0;
  const double exponent = std::min(history.consecutive_failures, 62);
  ++history.consecutive_failures;
  const double base = static_cast<double>(policy.initial.count()) * std::pow(policy.multiplier, exponent);
  const double capped = std::min(base, static_cast<double>(policy.max.count()));
  const double factor = 1.0 + policy.jitter * (2.0 * std::clamp(random01, 0.0, 1.0) - 1.0);
  // Jitter may not push past the cap: the cap is a promise to operators.
  const double jittered = std::min(capped * factor, static_cast<double>(policy.max.count()));
  return duration(static_cast<duration::rep>(std::max(0.0, jittered)));
}

}  // namespace octorun::supervision
