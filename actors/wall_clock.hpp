// The wall clock the actors and the metrics recorder take in their
// configuration, in seconds since the epoch: for the times they write
// (conditions' lastTransitionTime, a Runner's end) and the "now" a job's
// phases are measured against. Waits run on CAF's clock; tests fix both.
#pragma once

#include <cstdint>
#include <ctime>

namespace octorun {

using wall_clock = std::int64_t (*)();

// The system's: std::time.
inline std::int64_t epoch_seconds_now() { return static_cast<std::int64_t>(std::time(nullptr)); }

}  // namespace octorun
