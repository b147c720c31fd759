#include "actors/metrics/state_metrics.hpp"

#include <algorithm>

namespace octorun::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricType;
using labels = std::vector<ClientMetric::Label>;

ClientMetric gauge(labels l, double value) {
  ClientMetric m;
  m.label = std::move(l);
  m.gauge.value = value;
  return m;
}

labels runner_labels(const runner_record& r) {
  return {{"namespace", r.ns}, {"runner", r.name}, {"runnerset", r.runnerset}, {"variant", r.variant}};
}

labels variant_labels(const runnerset_record& s, const variant_counts& v) {
  return {{"namespace", s.ns}, {"runnerset", s.name}, {"variant", v.variant}};
}

constexpr model::runner_phase declared_phases[] = {
    model::runner_phase::pending, model::runner_phase::running, model::runner_phase::succeeded,
    model::runner_phase::failed, model::runner_phase::outdated};

// A per-variant gauge read off one field of variant_counts.
template <auto Field>
void emit_variant_field(const runnerset_record& s, std::vector<ClientMetric>& out) {
  for (const auto& v : s.variants) out.push_back(gauge(variant_labels(s, v), static_cast<double>(v.*Field)));
}

}  // namespace

const std::vector<generator<runner_record>>& runner_generators() {
  static const std::vector<generator<runner_record>> table = {
      {"octorun_runner_info", "Information about a Runner: its set, variant and GitHub runner id.",
       MetricType::Gauge,
       [](const runner_record& r, std::vector<ClientMetric>& out) {
         auto l = runner_labels(r);
         l.push_back({"github_runner_id", r.github_runner_id ? std::to_string(r.github_runner_id) : ""});
         out.push_back(gauge(std::move(l), 1));
       }},
      // One series per declared phase, 1 for the current one (kube-state-metrics'
      // pod phase idiom), so `sum by (phase)` works and absent means 0.
      {"octorun_runner_status_phase",
       "The Runner's phase. Pending: not assigned a job (starting or idle); Running: a job has been "
       "assigned; Succeeded, Failed, Outdated: finished.",
       MetricType::Gauge,
       [](const runner_record& r, std::vector<ClientMetric>& out) {
         if (r.phase == model::runner_phase::unset) return;  // not yet published by the controller
         for (auto p : declared_phases) {
           auto l = runner_labels(r);
           l.push_back({"phase", std::string(model::to_string(p))});
           out.push_back(gauge(std::move(l), p == r.phase ? 1 : 0));
         }
       }},
      {"octorun_runner_status_ready", "Whether the Runner's pod is ready (the runner is online).",
       MetricType::Gauge,
       [](const runner_record& r, std::vector<ClientMetric>& out) {
         out.push_back(gauge(runner_labels(r), r.pod_ready ? 1 : 0));
       }},
  };
  return table;
}

const std::vector<generator<runnerset_record>>& runnerset_generators() {
  static const std::vector<generator<runnerset_record>> table = {
      {"octorun_runnerset_desired_runners", "Runners the RunnerSet variant wants now.", MetricType::Gauge,
       emit_variant_field<&variant_counts::desired>},
      {"octorun_runnerset_spec_min_runners", "The variant's minRunners: idle runners kept on top of demand.",
       MetricType::Gauge, emit_variant_field<&variant_counts::min_runners>},
      {"octorun_runnerset_spec_max_runners", "The variant's maxRunners.", MetricType::Gauge,
       emit_variant_field<&variant_counts::max_runners>},
      {"octorun_runnerset_assigned_jobs", "Jobs assigned to the variant and not yet completed.",
       MetricType::Gauge, emit_variant_field<&variant_counts::assigned_jobs>},
      // The queue depth, from the same status counts: assigned jobs no runner
      // has started (clamped at 0: a start may be counted before the
      // statistics that assign its job).
      {"octorun_runnerset_queued_jobs",
       "Jobs assigned to the variant that no runner has started yet: assigned jobs less running runners "
       "(status assignedJobs - runningRunners, at least 0).",
       MetricType::Gauge,
       [](const runnerset_record& s, std::vector<ClientMetric>& out) {
         for (const auto& v : s.variants)
           out.push_back(gauge(variant_labels(s, v),
                               static_cast<double>(std::max<std::int64_t>(v.assigned_jobs - v.running, 0))));
       }},
      {"octorun_runnerset_runners",
       "Runners of the variant by state, as the RunnerSet's status counts them: starting (no job, pod not "
       "ready: status pendingRunners), idle (online, no job), running (a job is assigned), failed.",
       MetricType::Gauge,
       [](const runnerset_record& s, std::vector<ClientMetric>& out) {
         for (const auto& v : s.variants) {
           const std::pair<const char*, std::int32_t> states[] = {
               {"starting", v.starting}, {"idle", v.idle}, {"running", v.running}, {"failed", v.failed}};
           for (const auto& [state, count] : states) {
             auto l = variant_labels(s, v);
             l.push_back({"state", state});
             out.push_back(gauge(std::move(l), count));
           }
         }
       }},
      // Per set: the scale subresource has one replicas field. Derived values
      // (a busy ratio, per-set sums) are PromQL's: the adapter rules and the
      // recording rules in deploy/monitoring compute them from the above.
      {"octorun_runnerset_spec_replicas",
       "The RunnerSet's spec.replicas: the floor under job demand that kubectl scale or a "
       "HorizontalPodAutoscaler writes (0: none).",
       MetricType::Gauge,
       [](const runnerset_record& s, std::vector<ClientMetric>& out) {
         out.push_back(gauge({{"namespace", s.ns}, {"runnerset", s.name}}, s.replicas));
       }},
  };
  return table;
}

namespace {
template <class T, class Map>
void run_table(const std::vector<generator<T>>& table, const Map& objects,
               std::vector<prometheus::MetricFamily>& out) {
  for (const auto& g : table) {
    prometheus::MetricFamily family{g.name, g.help, g.type, {}};
    for (const auto& [key, object] : objects) g.emit(object, family.metric);
    out.push_back(std::move(family));
  }
}
}  // namespace

std::vector<prometheus::MetricFamily> generate(const state_snapshot& snapshot) {
  std::vector<prometheus::MetricFamily> out;
  run_table(runner_generators(), snapshot.runners, out);
  run_table(runnerset_generators(), snapshot.runnersets, out);
  return out;
}

std::vector<prometheus::MetricFamily> state_collector::Collect() const {
  auto snapshot = std::atomic_load(&snapshot_);
  return generate(*snapshot);
}

}  // namespace octorun::metrics
