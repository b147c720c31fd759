// When a supervisor restarts a failed child: capped exponential backoff with
// jitter, reset once a child has stayed up long enough to count as healthy.
#pragma once

#include <chrono>

namespace octorun::supervision {

using duration = std::chrono::nanoseconds;

struct restart_policy {
  duration initial = std::chrono::seconds(1);
  duration max = std::chrono::seconds(60);
  double multiplier = 2.0;
  // Each delay is scaled by a factor in [1 - jitter, 1 + jitter] so children
  // that failed together (a GitHub outage) do not retry in lockstep.
  double jitter = 0.2;
  // A child that ran this long before failing starts over at `initial`.
  duration healthy_after = std::chrono::seconds(60);
};

struct restart_history {
  int consecutive_failures = 0;
};

// The delay before restarting a child that failed after running for `uptime`;
// updates `history`. `random01` is uniform in [0, 1).
duration next_restart_delay(const restart_policy& policy, restart_history& history, duration uptime,
                            double random01);

}  // namespace octorun::supervision
