#include "actors/runnerset/webhook_sweep.hpp"

#include <algorithm>

namespace octorun::runnerset {

demand_sweep reconcile_demand(const std::map<std::int64_t, followed_job>& followed,
                              const std::set<std::int64_t>& counted, const std::set<std::int64_t>& completed,
                              const messages::active_work& listed) {
  demand_sweep out;
  std::set<std::int64_t> seen;  // a job listed twice counts once
  for (const auto& job : listed.jobs) {
    if (!seen.insert(job.id).second || completed.contains(job.id)) continue;
    if (job.status == "completed") {
      if (followed.contains(job.id)) out.finished.push_back(job);
      continue;
    }
    // waiting (an environment's approval), requested, pending: no runner can take it yet.
    if (job.status != "queued" && job.status != "in_progress") continue;
    if (!counted.contains(job.id) && !followed.contains(job.id)) out.found.push_back(job);
  }
  for (const auto& [job, where] : followed) {
    if (!counted.contains(job) || seen.contains(job)) continue;  // not demand now, or listed above
    if (where.run_id != 0 && !listed.runs.contains(where.run_id)) out.ended.push_back(job);
  }
  return out;
}

messages::sweep_request sweep_request_for(const std::map<std::int64_t, followed_job>& followed,
                                          const std::set<std::int64_t>& listed_runs) {
  messages::sweep_request ask;
  for (const auto& [job, where] : followed)
    if (where.run_id != 0 && !where.repository.empty())
      ask.followed_runs.emplace(where.run_id, where.repository);
  ask.listed_runs = listed_runs;
  return ask;
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
  if (job.status == "completed")
    return messages::job_completed{std::move(info), job.runner_name, 0, job.conclusion};
  if (job.status == "in_progress" && !job.runner_name.empty())
    return messages::job_started{std::move(info), job.runner_name, 0};
  return messages::job_available{std::move(info)};
}

}  // namespace octorun::runnerset
