// Octorun's state metrics, in the style of kube-state-metrics: a table of
// small generators, each turning one stored object into the samples of one
// metric family at scrape time. The metrics actor keeps the store current
// from what the Runner and RunnerSet actors report and publishes immutable
// snapshots; scrapes read the latest snapshot and never block the actors.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/runner_phase.hpp"

namespace octorun::metrics {

struct runner_record {
  std::string ns;
  std::string name;
  std::string runnerset;
  std::string variant;
  model::runner_phase phase = model::runner_phase::unset;
  bool pod_ready = false;
  std::int64_t github_runner_id = 0;
};

// A variant's counts as the RunnerSet's status publishes them (the status is
// the one source of truth: the metrics never count Runners a second way),
// with min and max from its spec.
struct variant_counts {
  std::string variant;
  std::int32_t desired = 0;
  std::int32_t min_runners = 0;
  std::int32_t max_runners = 0;
  std::int32_t starting = 0;  // status pendingRunners: no job, pod not ready yet
  std::int32_t idle = 0;      // status idleRunners: online, no job
  std::int32_t running = 0;   // status runningRunners: a job is assigned
  std::int32_t failed = 0;    // status failedRunners
  std::int64_t assigned_jobs = 0;
};

struct runnerset_record {
  std::string ns;
  std::string name;
  std::int32_t replicas = 0;             // spec.replicas: the scale target (kubectl scale, an HPA)
  std::vector<variant_counts> variants;  // one entry for a set without variants
};

using object_key = std::pair<std::string, std::string>;  // namespace, name

struct state_snapshot {
  std::map<object_key, runner_record> runners;
  std::map<object_key, runnerset_record> runnersets;
};

// One metric family generated from every stored object of type T.
template <class T>
struct generator {
  const char* name;
  const char* help;
  prometheus::MetricType type;
  void (*emit)(const T& object, std::vector<prometheus::ClientMetric>& out);
};

const std::vector<generator<runner_record>>& runner_generators();
const std::vector<generator<runnerset_record>>& runnerset_generators();

// Runs every generator over `snapshot`. Families with no samples are kept
// (with HELP/TYPE) so dashboards see the metric names from the start.
std::vector<prometheus::MetricFamily> generate(const state_snapshot& snapshot);

// A prometheus-cpp Collectable serving the latest published snapshot.
class state_collector : public prometheus::Collectable {
 public:
  void publish(std::shared_ptr<const state_snapshot> snapshot) {
    std::atomic_store(&snapshot_, std::move(snapshot));
  }
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::shared_ptr<const state_snapshot> snapshot_ = std::make_shared<state_snapshot>();
};

}  // namespace octorun::metrics
