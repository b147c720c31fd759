#include "actors/metrics/event_metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>

#include <mutex>
#include <set>

#include "actors/metrics/declared.hpp"

namespace octorun::metrics {
namespace {

struct families {
  prometheus::Family<prometheus::Counter>& rejected;
  prometheus::Family<prometheus::Gauge>& rate_limited;
  prometheus::Family<prometheus::Counter>& pauses;
  prometheus::Family<prometheus::Gauge>& deferred;
  prometheus::Family<prometheus::Counter>& events_dropped;
};

// The table of event families: name, help, type.
const std::vector<prometheus::MetricFamily>& declared() {
  using prometheus::MetricType;
  static const std::vector<prometheus::MetricFamily> table{
      {"octorun_rejected_input_total",
       "Job deliveries, scale-set messages and watched objects labelled for no RunnerSet turned away "
       "(nothing "
       "else changed), by source and reason.",
       MetricType::Counter,
       {}},
      {"octorun_github_rate_limited",
       "1 while the RunnerSet's GitHub calls are paused on a spent rate limit, else 0.",
       MetricType::Gauge,
       {}},
      {"octorun_github_rate_limit_pauses_total",
       "Pauses of the RunnerSet's GitHub calls on a spent rate limit.",
       MetricType::Counter,
       {}},
      {"octorun_github_deferred_removals",
       "GitHub runners the RunnerSet removes once its GitHub budget allows (status.pendingRemovals).",
       MetricType::Gauge,
       {}},
      {"octorun_kube_events_dropped_total",
       "Kubernetes Events not written because 1,000 already waited to be written (a burst).",
       MetricType::Counter,
       {}},
  };
  return table;
}

template <class Builder>
auto& build(Builder builder, std::size_t i) {
  return builder.Name(declared()[i].name).Help(declared()[i].help).Register(event_registry());
}

families& get() {
  static families f{build(prometheus::BuildCounter(), 0), build(prometheus::BuildGauge(), 1),
                    build(prometheus::BuildCounter(), 2), build(prometheus::BuildGauge(), 3),
                    build(prometheus::BuildCounter(), 4)};
  return f;
}

// A set's series are written by its actor and removed by the cleanup of an
// actor that had its name (a restarted or re-created set, on another
// thread): Add returns a reference that a concurrent Remove frees, so every
// Add-then-use and every Remove of these families holds this.
std::mutex& set_series_mutex() {
  static std::mutex mu;
  return mu;
}

prometheus::Labels set_labels(const std::string& ns, const std::string& runnerset) {
  return {{"namespace", ns}, {"runnerset", runnerset}};
}

}  // namespace

prometheus::Registry& event_registry() {
  static prometheus::Registry registry;
  return registry;
}

std::vector<prometheus::MetricFamily> collect_event_metrics() {
  get();
  return complete(event_registry().Collect(), declared());
}

bool reject_input(const std::string& source, const std::string& reason, const std::string& key) {
  get().rejected.Add({{"source", source}, {"reason", reason}}).Increment();
  static std::mutex mu;
  static std::set<std::string> logged;
  std::lock_guard lock(mu);
  if (logged.size() >= 4096) logged.clear();
  return logged.insert(source + "\n" + reason + "\n" + key).second;
}

void record_github_pause(const std::string& ns, const std::string& runnerset, bool paused_now) {
  std::lock_guard lock(set_series_mutex());
  auto& f = get();
  f.rate_limited.Add(set_labels(ns, runnerset)).Set(paused_now ? 1 : 0);
  auto& pauses = f.pauses.Add(set_labels(ns, runnerset));
  if (paused_now) pauses.Increment();
}

void set_deferred_removals(const std::string& ns, const std::string& runnerset, std::int64_t count) {
  std::lock_guard lock(set_series_mutex());
  get().deferred.Add(set_labels(ns, runnerset)).Set(static_cast<double>(count));
}

void count_dropped_kube_event() { get().events_dropped.Add({}).Increment(); }

void forget_runnerset(const std::string& ns, const std::string& runnerset) {
  std::lock_guard lock(set_series_mutex());
  auto& f = get();
  const auto labels = set_labels(ns, runnerset);
  f.rate_limited.Remove(&f.rate_limited.Add(labels));
  f.pauses.Remove(&f.pauses.Add(labels));
  f.deferred.Remove(&f.deferred.Add(labels));
}

}  // namespace octorun::metrics
