#include "actors/runnerset/webhook_sweep.hpp"

#include <algorithm>

namespace octorun::runnerset {

demand_sweep reconcile_demand(const std::map<std::int64_t, std::int64_t>& counted_at_start,
                              const std::set<std::int64_t>& counted_now,
                              const std::set<std::int64_t>& completed, const messages::active_work& listed) {
  demand_sweep out;
  std::set<std::int64_t> listed_completed;
  for (const auto& job : listed.jobs) {
    if (job.status == "completed") {
      listed_completed.insert(job.id);
      continue;
    }
    // waiting (an environment's approval), requested, pending: no runner can take it yet.
    if (job.status != "queued" && job.status != "in_progress") continue;
    if (counted_now.contains(job.id) || completed.contains(job.id)) continue;
    if (std::any_of(out.found.begin(), out.found.end(), [&](const auto& f) { return f.id == job.id; }))
      continue;
    out.found.push_back(job);
  }
  for (const auto& [job, run] : counted_at_start) {
    if (!counted_now.contains(job)) continue;  // ended meanwhile, by a delivery
    const bool run_over = run != 0 && !listed.runs.contains(run);
    if (run_over || listed_completed.contains(job)) out.ended.push_back(job);
  }
  return out;
}

std::vector<std::int64_t> known_runs(const std::map<std::int64_t, std::int64_t>& counted) {
  std::set<std::int64_t> runs;
  for (const auto& [job, run] : counted)
    if (run != 0) runs.insert(run);
  return {runs.begin(), runs.end()};
}

messages::job_message job_message_of(const messages::workflow_job& job) {
  messages::job_info info;
  info.source = messages::job_source::webhook;
  info.job_id = job.id;
  info.github_job_id = std::to_string(job.id);
  info.repository = job.repository;
  info.run_id = job.run_id;
  info.labels = job.labels;
  info.swept = true;
  if (job.status == "in_progress" && !job.runner_name.empty())
    return messages::job_started{std::move(info), job.runner_name, 0};
  return messages::job_available{std::move(info)};
}

}  // namespace octorun::runnerset
