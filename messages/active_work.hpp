// What GitHub lists as queued or running in a scope's repositories (the
// webhook intake's sweep, docs/intakes.md): plain structs.
#pragma once

#include <cstdint>
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
};

struct active_work {
  std::set<std::int64_t> runs;     // the workflow runs queued or in progress
  std::vector<workflow_job> jobs;  // the jobs of those runs that were asked for
};

}  // namespace octorun::messages
