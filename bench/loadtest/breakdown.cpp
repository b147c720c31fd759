#include "bench/loadtest/breakdown.hpp"

#include <algorithm>

#include "bench/common/stats.hpp"

namespace octorun::loadtest {
namespace {

// The simulator stamps whole milliseconds and the watch fractional ones, so
// two marks of the same instant may read up to a millisecond out of order.
constexpr double stamp_tolerance_ms = 1;

std::optional<double> span(double from_ms, double to_ms) {
  if (from_ms <= 0 || to_ms <= 0 || to_ms < from_ms - stamp_tolerance_ms) return std::nullopt;
  return std::max(0.0, to_ms - from_ms) / 1000;
}

void take_earlier(double& mark, double other) {
  if (other > 0 && (mark <= 0 || other < mark)) mark = other;
}

}  // namespace

pod_marks earliest_sightings(pod_marks pod, const bench::runner_times& runner) {
  take_earlier(pod.created, runner.pod);
  take_earlier(pod.scheduled, runner.pod_scheduled);  // spec.nodeName and PodScheduled come in one binding
  take_earlier(pod.running, runner.pod_running);
  return pod;
}

std::string_view phase_name(phase p) {
  switch (p) {
    case phase::manager:
      return "manager";
    case phase::scheduling:
      return "scheduling";
    case phase::node_provisioning:
      return "node_provisioning";
    case phase::sandbox:
      return "sandbox";
    case phase::image_pull:
      return "image_pull";
    case phase::container_start:
      return "container_start";
    case phase::runner_start:
      return "runner_start";
    case phase::assignment:
      return "assignment";
  }
  return "?";
}

job_phases phases_of(const bench::sim_job_record& job, const pod_marks* pod, const node_marks* node,
                     double runner_online_ms) {
  job_phases out;
  auto set = [&](phase p, std::optional<double> v) { out[static_cast<std::size_t>(p)] = v; };
  const pod_marks none;
  const auto& m = pod ? *pod : none;
  set(phase::manager, span(job.queued_ms, m.created));
  set(phase::scheduling, span(m.created, m.scheduled));
  if (node != nullptr && m.created > 0 && node->created > 0)
    set(phase::node_provisioning,
        node->created <= m.created ? std::optional(0.0) : span(m.created, node->ready));
  set(phase::sandbox, span(m.scheduled, m.sandbox_ready));
  set(phase::image_pull, span(m.sandbox_ready, m.images_pulled));
  set(phase::container_start, span(m.images_pulled, m.running));
  set(phase::runner_start, span(m.running, runner_online_ms));
  set(phase::assignment, span(runner_online_ms, job.started_ms));
  return out;
}

std::array<phase_stats, phase_count> phase_statistics(const std::vector<job_phases>& jobs) {
  std::array<phase_stats, phase_count> out;
  for (std::size_t p = 0; p < phase_count; ++p) {
    std::vector<double> seen;
    for (const auto& j : jobs)
      if (j[p])
        seen.push_back(*j[p]);
      else
        ++out[p].unmeasured;
    out[p].measured = seen.size();
    out[p].p50 = bench::percentile(seen, 0.5);
    out[p].p95 = bench::percentile(seen, 0.95);
    out[p].p99 = bench::percentile(seen, 0.99);
  }
  return out;
}

double idle_node_seconds(const std::map<std::string, node_marks>& nodes, const std::vector<busy_span>& busy,
                         double from_ms, double to_ms) {
  double idle_ms = 0;
  for (const auto& [name, n] : nodes) {
    const double begin = std::max(from_ms, n.created);
    const double end = std::min(to_ms, n.deleted > 0 ? n.deleted : to_ms);
    if (n.created <= 0 || end <= begin) continue;
    std::vector<std::pair<double, double>> spans;
    for (const auto& b : busy)
      if (b.node == name && b.to_ms > begin && b.from_ms < end)
        spans.emplace_back(std::max(begin, b.from_ms), std::min(end, b.to_ms));
    std::sort(spans.begin(), spans.end());
    // Busy runners overlap on a shared node: count their union once.
    double busy_ms = 0, covered_to = begin;
    for (const auto& [from, to] : spans) {
      const double start = std::max(from, covered_to);
      if (to > start) busy_ms += to - start;
      covered_to = std::max(covered_to, to);
    }
    idle_ms += (end - begin) - busy_ms;
  }
  return idle_ms / 1000;
}

std::vector<state_seconds> runner_seconds_by_window(
    const std::vector<std::pair<double, bench::runner_counts>>& samples, double width, std::size_t windows) {
  std::vector<state_seconds> out(windows);
  if (windows == 0 || !(width > 0)) return out;
  for (std::size_t i = 0; i + 1 < samples.size(); ++i) {
    const auto& [at, c] = samples[i];
    const double held = std::max(0.0, samples[i + 1].first - at);
    auto& w = out[std::min(windows - 1, static_cast<std::size_t>(std::max(0.0, at) / width))];
    w.starting += held * static_cast<double>(c.starting);
    w.idle += held * static_cast<double>(c.idle);
    w.busy += held * static_cast<double>(c.busy);
    w.ending += held * static_cast<double>(c.finished + c.deleting);
  }
  return out;
}

}  // namespace octorun::loadtest
