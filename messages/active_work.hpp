// What GitHub lists as queued or running in a scope's repositories (the
// webhook intake's sweep, docs/intakes.md): plain structs.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace octorun::messages {

// A job of a workflow run, as GET /repos/{o}/{r}/actions/runs/{id}/jobs lists it.
struct workflow_job {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::string repository;  // "owner/repo"
  std::string status;      // queued, in_progress, completed, waiting, …
  std::vector<std::string> labels;
  std::string runner_name;  // "" until a runner takes it
  std::string conclusion;   // once completed: success, failure, cancelled, …
};

// What a sweep asks for besides the queued and running runs.
struct sweep_request {
  // Runs followed to their end (those of the jobs a set counts or its
  // runners run), with their repository ("owner/repo"): once such a run is
  // no longer queued or running, its jobs are listed (how each ended).
  std::map<std::int64_t, std::string> followed_runs;
  // Runs whose jobs were listed already: not listed again while they run.
  std::set<std::int64_t> listed_runs;
};

struct active_work {
  std::set<std::int64_t> runs;  // the workflow runs queued or in progress
  // The jobs of the runs neither followed nor listed before, and of the
  // followed runs that ended.
  std::vector<workflow_job> jobs;
};

}  // namespace octorun::messages
