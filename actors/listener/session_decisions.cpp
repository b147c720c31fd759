#include "actors/listener/session_decisions.hpp"

#include <algorithm>
#include <set>
#include <variant>

namespace octorun::listener {

std::vector<std::int64_t> jobs_to_acquire(const github::queue_message& m) {
  std::vector<std::int64_t> out;
  std::set<std::int64_t> seen;
  for (const auto& job : m.jobs)
    if (const auto* available = std::get_if<messages::job_available>(&job))
      if (available->job.job_id != 0 && seen.insert(available->job.job_id).second)
        out.push_back(available->job.job_id);
  return out;
}

}  // namespace octorun::listener
