#include "actors/supervisor/restart_policy.hpp"

#include "common/backoff.hpp"

namespace octorun::supervision {

duration next_restart_delay(const restart_policy& policy, restart_history& history, duration uptime,
                            double random01) {
  if (uptime >= policy.healthy_after) history.consecutive_failures = 0;
  const exponential_backoff<duration> backoff{policy.initial, policy.max, policy.multiplier,
                                              jitter_around(policy.jitter)};
  return backoff.delay(history.consecutive_failures++, random01);
}

}  // namespace octorun::supervision
