// Template rollouts: which outdated runners to replace now. A runner is
// outdated when its pod fingerprint (model::pod_fingerprint of its template
// and pod configuration) differs from its variant's. Idle outdated runners
// are replaced in steps (removed the way scale-down removes them, GitHub
// first, and recreated from the current template); a busy one is never
// chosen: it finishes its job on the pod it has. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octorun::runnerset {

struct rollout_view {
  std::string name;
  bool outdated = false;
  // No job, not finished, not leaving, not held busy: may be removed now.
  bool idle = false;
  // Already on its way out (a removal in flight, or deleted and not busy).
  bool leaving = false;
  bool pod_ready = false;
  std::int64_t created = 0;
};

// At most this many outdated runners leave at a time: a quarter of the
// desired count, at least one (as a Deployment's default maxUnavailable).
std::int32_t replacement_budget(std::int32_t desired);

// The idle outdated runners to remove now, within the budget left by the
// outdated runners already leaving: not-yet-online ones first (GitHub cannot
// be handing them a job), then the oldest; names break ties.
std::vector<std::string> runners_to_replace(std::int32_t desired, std::vector<rollout_view> runners);

}  // namespace octorun::runnerset
