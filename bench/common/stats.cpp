#include "bench/common/stats.hpp"

#include <rapidjson/document.h>

#include <algorithm>

#include "common/json.hpp"

namespace octorun::bench {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

double median(const std::vector<double>& v) { return percentile(v, 0.5); }

std::vector<sim_job_record> parse_sim_jobs(std::string_view state_json) {
  rapidjson::Document d;
  d.Parse(state_json.data(), state_json.size());
  std::vector<sim_job_record> out;
  if (d.HasParseError() || !d.IsObject()) return out;
  const auto* jobs = json::find_value(d, "jobs");
  if (jobs == nullptr || !jobs->IsArray()) return out;
  for (const auto& j : jobs->GetArray()) {
    if (!j.IsObject()) continue;
    sim_job_record r;
    r.id = json::i64(j, "id");
    r.state = json::str(j, "state");
    r.runner_name = json::str(j, "runner_name");
    r.queued_ms = static_cast<double>(json::i64(j, "queued_at_ms"));
    r.started_ms = static_cast<double>(json::i64(j, "started_at_ms"));
    r.completed_ms = static_cast<double>(json::i64(j, "completed_at_ms"));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace octorun::bench
