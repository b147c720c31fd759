// Octorun's event metrics, beside the state metrics (state_metrics.hpp):
// counters and gauges of things that happen rather than of objects that
// exist — input turned away, GitHub rate-limit pauses. One process-wide
// prometheus-cpp registry, served on /metrics; thread-safe, so any actor
// (or adapter thread) records into it directly.
#pragma once

#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <string>
#include <vector>

namespace octorun::metrics {

prometheus::Registry& event_registry();
// Every event family, also those without samples yet (declared.hpp).
std::vector<prometheus::MetricFamily> collect_event_metrics();

// Input turned away with nothing else changed: a delivery for a repository
// no RunnerSet serves, a job whose labels no variant carries, an unknown or
// malformed scale-set message, a duplicate or stale delivery. Counts it in
// octorun_rejected_input_total{source, reason}; true the first time this
// (source, reason, key) is seen, when the caller logs it with the reason
// (once: a flood of the same bad input is one line; the key says what is the
// same, e.g. a repository or a delivery id; at most a few thousand keys are
// remembered, then they are forgotten and logged again).
bool reject_input(const std::string& source, const std::string& reason, const std::string& key);

// A RunnerSet's GitHub calls are paused on a spent budget:
// octorun_github_rate_limited{namespace, runnerset} (1 while paused) and
// octorun_github_rate_limit_pauses_total{namespace, runnerset}.
void record_github_pause(const std::string& ns, const std::string& runnerset, bool paused_now);
// GitHub runners whose removal waits for the budget:
// octorun_github_deferred_removals{namespace, runnerset}.
void set_deferred_removals(const std::string& ns, const std::string& runnerset, std::int64_t count);
// A Kubernetes Event the recorder dropped, its queue full:
// octorun_kube_events_dropped_total.
void count_dropped_kube_event();
// The RunnerSet is gone: its series go too.
void forget_runnerset(const std::string& ns, const std::string& runnerset);

}  // namespace octorun::metrics
