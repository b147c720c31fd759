#include "bench/manager/breakdown.hpp"

#include <fstream>
#include <sstream>

namespace octorun::bench {

stage_times job_stages(const std::vector<sim_job_record>& jobs,
                       const std::map<std::string, runner_times>& runners) {
  stage_times out = {{"queued -> Runner created", {}},
                     {"Runner -> JIT Secret", {}},
                     {"JIT Secret -> Pod", {}},
                     {"Pod -> scheduled", {}},
                     {"scheduled -> pod Running", {}},
                     {"pod Running -> job started", {}},
                     {"job started -> phase Running", {}},
                     {"job completed -> phase Succeeded", {}},
                     {"Succeeded -> deletion started", {}},
                     {"deletion started -> Runner gone", {}}};
  auto add = [&](size_t stage, double from, double to) {
    if (from > 0 && to > 0) out[stage].second.push_back(to - from);
  };
  for (const auto& j : jobs) {
    auto it = runners.find(j.runner_name);
    if (j.runner_name.empty() || it == runners.end()) continue;
    const auto& r = it->second;
    add(0, j.queued_ms, r.created);
    add(1, r.created, r.secret);
    add(2, r.secret, r.pod);
    add(3, r.pod, r.pod_scheduled);
    add(4, r.pod_scheduled, r.pod_running);
    add(5, r.pod_running, j.started_ms);
    add(6, j.started_ms, r.running);
    add(7, j.completed_ms, r.succeeded);
    add(8, r.succeeded, r.deleting);
    add(9, r.deleting, r.deleted);
  }
  return out;
}

std::vector<request_stats> read_request_trace(const std::string& file, double from_ms, double to_ms) {
  std::map<std::string, request_stats> by_key;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    double sent = 0, queue_us = 0, limiter_us = 0, wire_us = 0;
    std::string method, kind;
    long status = 0;
    if (!(f >> sent >> method >> kind >> status >> queue_us >> limiter_us >> wire_us)) continue;
    if (sent < from_ms || sent > to_ms) continue;
    auto key = method + " " + kind;
    auto& s = by_key[key];
    s.key = key;
    ++s.count;
    if (queue_us >= 0) s.queue_ms.push_back(queue_us / 1000);
    s.limiter_ms.push_back(limiter_us / 1000);
    s.wire_ms.push_back(wire_us / 1000);
  }
  std::vector<request_stats> out;
  for (auto& [k, s] : by_key) out.push_back(std::move(s));
  return out;
}

}  // namespace octorun::bench
