// A variant's demand: the jobs GitHub counts as the variant's, less those
// that are over although GitHub still counts them (their runner finished
// before GitHub's completion came). Pure: plan() reads it from the set's
// observation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "actors/runnerset/observation.hpp"

namespace octorun::runnerset {

// The jobs GitHub counts as the variant's: the statistics' assigned jobs
// (Listener), the jobs delivered and not completed (Webhook).
std::int64_t counted_jobs(const set_observation& o, const std::string& variant);

// The jobs of `variant` whose runner finished before GitHub's completion
// came (set_observation::unheard_completions), within the grace. Webhook:
// those still delivered and not completed (active_jobs, under the variant
// their labels pick). Listener: those of the variant's runners, no more than
// the statistics' running jobs that no runner of the variant is running
// (statistics newer than the job messages may have stopped counting a job
// already).
struct over_but_counted {
  std::int64_t jobs = 0;
  std::optional<time_point> first_grace_end;  // plan again then
};
over_but_counted jobs_over_but_counted(const set_observation& o, const std::string& variant);

}  // namespace octorun::runnerset
