// The manager's own metrics, served on /metrics beside the state metrics
// (state_metrics.hpp): its identity and leadership, the Kubernetes and GitHub
// requests its adapters make, GitHub's rate-limit budget per RunnerSet, the
// webhook deliveries by outcome, and what its actors report through
// recorder.hpp (runners created and deleted, failed actions, listener
// sessions). One object per process, shared (std::shared_ptr) by everything
// that reports to it; every method is thread-safe.
//
// Names follow the Prometheus naming guide (counters end in _total, times
// are _seconds, timestamps _timestamp_seconds); labels are bounded (see
// recorder.hpp). docs/monitoring.md lists every family.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "actors/metrics/recorder.hpp"
#include "actors/metrics/state_metrics.hpp"
#include "actors/wall_clock.hpp"
#include "adapters/github/webhook_intake.hpp"
#include "adapters/kube/request_metrics.hpp"

namespace octorun::metrics {

struct manager_identity {
  std::string identity;  // --identity: the Lease holder name
  std::string version;
  std::string commit;
};

// What the job timeline and cost families measure against.
struct metrics_options {
  // A job that waited longer than this from GitHub queueing it to a runner
  // starting it counts in octorun_jobs_start_target_exceeded_total
  // (--job-start-target-seconds; a set's own target would replace it).
  std::int64_t job_start_target_seconds = 300;
  model::timeline_limits timeline;
  // Distinct repository label values per RunnerSet in the cost families;
  // later repositories count as "other".
  std::size_t repositories_per_set = 20;
  // "Now" for a job's phases and a Runner's end without a recorded one
  // (wall_clock.hpp).
  wall_clock now = &epoch_seconds_now;
};

class manager_metrics : public recorder,
                        public kube::request_observer,
                        public std::enable_shared_from_this<manager_metrics> {
 public:
  static std::shared_ptr<manager_metrics> make(const manager_identity& id,
                                               const metrics_options& options = {});

  // The Prometheus text of every family, the state metrics last.
  std::string scrape() const;

  // The state metrics the feed publishes to (metrics_feed.hpp).
  const std::shared_ptr<state_collector>& state() const { return state_; }
  // What the webhook intake counts into (intake_options::counters).
  const std::shared_ptr<github::intake_counters>& webhook_deliveries() const { return deliveries_; }

  void set_leader(bool leading);
  // What octorun_manager_actors reads at each scrape (the actor system's
  // count of running actors); set once, before the first scrape.
  void count_actors_with(std::function<std::size_t()> count) { count_actors_ = std::move(count); }

  // kube::request_observer
  void observe(const kube::request_kind& kind, long code, std::chrono::duration<double> elapsed) override;

  // recorder
  void runner_created(std::string_view ns, std::string_view set, std::string_view variant) override;
  void runner_deleted(std::string_view ns, std::string_view set, std::string_view variant,
                      deletion_reason why) override;
  void stuck_start_replaced(std::string_view ns, std::string_view set, std::string_view variant) override;
  void reconcile_error(std::string_view controller, std::string_view action) override;
  void listener_session(std::string_view ns, std::string_view set, std::string_view variant,
                        bool open) override;
  void listener_failed(std::string_view ns, std::string_view set, std::string_view variant) override;
  void listener_stopped(std::string_view ns, std::string_view set, std::string_view variant) override;
  void job_started(std::string_view ns, std::string_view set, std::string_view variant,
                   const messages::job_info& job) override;
  void job_completed(std::string_view ns, std::string_view set, std::string_view variant,
                     std::string_view result, const messages::job_info& job) override;
  void runner_gone(std::string_view ns, std::string_view set, std::string_view variant,
                   const runner_end& end) override;
  void runner_version(std::string_view ns, std::string_view set, std::string_view variant,
                      const model::version_verdict* verdict) override;
  std::shared_ptr<github::request_observer> github_observer(std::string_view ns,
                                                            std::string_view set) override;

 private:
  manager_metrics(const manager_identity& id, const metrics_options& options);
  // Records what `measure` found of the phases of one job or Runner.
  void record_phases(const prometheus::Labels& set_labels, const model::phase_measurement& m);
  // The label value of `repository` in `ns`/`set`'s cost series (bounded:
  // metrics_options::repositories_per_set).
  std::string repository_value(std::string_view ns, std::string_view set, std::string_view repository);
  class github_requests;
  // The rate-limit series of one RunnerSet (by x-ratelimit-resource) and how
  // many github_requests observers hold them.
  struct budget_gauges {
    prometheus::Gauge* limit;
    prometheus::Gauge* remaining;
    prometheus::Gauge* reset;
  };
  struct set_budget {
    int holders = 0;
    std::map<std::string, budget_gauges> gauges;
  };

  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::vector<prometheus::MetricFamily> declared_;  // every family of registry_, without samples
  std::shared_ptr<state_collector> state_ = std::make_shared<state_collector>();
  std::shared_ptr<github::intake_counters> deliveries_ = std::make_shared<github::intake_counters>();
  prometheus::Gauge* leader_ = nullptr;
  prometheus::Gauge* actors_ = nullptr;
  std::function<std::size_t()> count_actors_;
  prometheus::Family<prometheus::Counter>* kube_requests_ = nullptr;
  prometheus::Family<prometheus::Histogram>* kube_duration_ = nullptr;
  prometheus::Family<prometheus::Counter>* github_requests_ = nullptr;
  prometheus::Family<prometheus::Gauge>* rate_limit_ = nullptr;
  prometheus::Family<prometheus::Gauge>* rate_remaining_ = nullptr;
  prometheus::Family<prometheus::Gauge>* rate_reset_ = nullptr;
  prometheus::Family<prometheus::Counter>* runners_created_ = nullptr;
  prometheus::Family<prometheus::Counter>* runners_deleted_ = nullptr;
  prometheus::Family<prometheus::Counter>* stuck_starts_ = nullptr;
  prometheus::Family<prometheus::Counter>* reconcile_errors_ = nullptr;
  prometheus::Family<prometheus::Gauge>* listener_open_ = nullptr;
  prometheus::Family<prometheus::Counter>* listener_failures_ = nullptr;
  prometheus::Family<prometheus::Counter>* jobs_started_ = nullptr;
  prometheus::Family<prometheus::Counter>* jobs_completed_ = nullptr;
  prometheus::Family<prometheus::Histogram>* job_queue_ = nullptr;
  prometheus::Family<prometheus::Histogram>* job_run_ = nullptr;
  prometheus::Family<prometheus::Histogram>* job_phase_ = nullptr;
  prometheus::Family<prometheus::Counter>* timestamp_problems_ = nullptr;
  prometheus::Family<prometheus::Counter>* start_target_exceeded_ = nullptr;
  prometheus::Family<prometheus::Counter>* runner_seconds_ = nullptr;
  prometheus::Family<prometheus::Counter>* cpu_core_seconds_ = nullptr;
  prometheus::Family<prometheus::Counter>* memory_byte_seconds_ = nullptr;
  prometheus::Family<prometheus::Gauge>* version_info_ = nullptr;
  prometheus::Family<prometheus::Gauge>* version_health_ = nullptr;
  prometheus::Family<prometheus::Gauge>* version_deadline_ = nullptr;
  std::mutex versions_mutex_;
  // The version label each (namespace, set, variant) has in version_info_.
  std::map<std::tuple<std::string, std::string, std::string>, std::string> version_labels_;
  metrics_options options_;
  std::mutex repositories_mutex_;
  std::map<std::pair<std::string, std::string>, std::set<std::string, std::less<>>> repositories_;
  std::mutex listener_mutex_;  // a session series is set and removed by different threads
  std::mutex budgets_mutex_;
  std::map<std::pair<std::string, std::string>, set_budget> budgets_;  // by (namespace, set)
};

// The buckets of octorun_kube_request_duration_seconds, octorun_job_queue_duration_seconds,
// octorun_job_run_duration_seconds and octorun_job_phase_seconds.
const prometheus::Histogram::BucketBoundaries& kube_latency_buckets();
const prometheus::Histogram::BucketBoundaries& job_queue_buckets();
const prometheus::Histogram::BucketBoundaries& job_run_buckets();
const prometheus::Histogram::BucketBoundaries& job_phase_buckets();

// A job's conclusion as a label value: GitHub's words (webhook conclusions,
// the scale-set protocol's results) lower-cased, anything else "other", none
// "unknown", so the label stays bounded whatever a message says.
std::string result_label(std::string_view result);

}  // namespace octorun::metrics
