#include "bench/manager/breakdown.hpp"

#include <algorithm>
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
                     {"deletion started -> Runner gone", {}},
                     {"queued -> phase Running (all)", {}}};
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
    add(10, j.queued_ms, r.running);
  }
  return out;
}

std::vector<trace_entry> read_request_trace(const std::string& file, double from_ms, double to_ms) {
  std::vector<trace_entry> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    trace_entry e;
    long status = 0;
    double queue_us = 0, limiter_us = 0, wire_us = 0;
    if (!(f >> e.sent_ms >> e.method >> e.kind >> e.name >> status >> queue_us >> limiter_us >> wire_us))
      continue;
    if (e.sent_ms < from_ms || e.sent_ms > to_ms) continue;
    e.queue_ms = queue_us < 0 ? -1 : queue_us / 1000;
    e.limiter_ms = limiter_us / 1000;
    e.wire_ms = wire_us / 1000;
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.enqueued_ms() < b.enqueued_ms(); });
  return out;
}

std::vector<request_stats> request_stats_of(const std::vector<trace_entry>& trace) {
  std::map<std::string, request_stats> by_key;
  for (const auto& e : trace) {
    auto key = e.method + " " + e.kind;
    auto& s = by_key[key];
    s.key = key;
    ++s.count;
    if (e.queue_ms >= 0) s.queue_ms.push_back(e.queue_ms);
    s.limiter_ms.push_back(e.limiter_ms);
    s.wire_ms.push_back(e.wire_ms);
  }
  std::vector<request_stats> out;
  for (auto& [k, s] : by_key) out.push_back(std::move(s));
  return out;
}

stage_times actor_delays(const std::vector<sim_job_record>& jobs,
                         const std::map<std::string, runner_times>& runners,
                         const std::vector<trace_entry>& trace) {
  stage_times out = {
      {"job started -> Runner read queued", {}},      {"  read answered -> status patch queued", {}},
      {"job completed -> Runner read queued", {}},    {"  read answered -> status patch queued", {}},
      {"Succeeded seen -> Runner delete queued", {}}, {"deletion seen -> pod delete queued", {}}};
  // The first request of `method kind` for `name` queued at or after `after_ms`.
  auto first = [&](const std::string& method, const std::string& kind, const std::string& name,
                   double after_ms) -> const trace_entry* {
    for (const auto& e : trace)
      if (e.enqueued_ms() >= after_ms && e.name == name && e.kind == kind && e.method == method) return &e;
    return nullptr;
  };
  auto read_then_patch = [&](size_t stage, const std::string& runner, double event_ms) {
    if (event_ms <= 0) return;
    const auto* read = first("GET", "runners", runner, event_ms);
    if (read == nullptr) return;
    out[stage].second.push_back(read->enqueued_ms() - event_ms);
    if (const auto* patch = first("PATCH", "runners/status", runner, read->answered_ms()))
      out[stage + 1].second.push_back(patch->enqueued_ms() - read->answered_ms());
  };
  for (const auto& j : jobs) {
    if (j.runner_name.empty()) continue;
    read_then_patch(0, j.runner_name, j.started_ms);
    read_then_patch(2, j.runner_name, j.completed_ms);
  }
  for (const auto& [name, t] : runners) {
    if (t.succeeded > 0)
      if (const auto* del = first("DELETE", "runners", name, t.succeeded))
        out[4].second.push_back(del->enqueued_ms() - t.succeeded);
    if (t.deleting > 0)
      if (const auto* del = first("DELETE", "pods", name, t.deleting))
        out[5].second.push_back(del->enqueued_ms() - t.deleting);
  }
  return out;
}

}  // namespace octorun::bench
