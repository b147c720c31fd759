#include "actors/metrics/manager_metrics.hpp"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "actors/metrics/declared.hpp"
#include "actors/metrics/event_metrics.hpp"

namespace octorun::metrics {
namespace {

using prometheus::Labels;

std::string code_label(long code) { return code > 0 ? std::to_string(code) : std::string("error"); }

std::string_view reason_label(deletion_reason why) {
  switch (why) {
    case deletion_reason::finished:
      return "finished";
    case deletion_reason::scaled_down:
      return "scaled_down";
    case deletion_reason::stuck_start:
      return "stuck_start";
    case deletion_reason::drained:
      break;
  }
  return "drained";
}

Labels set_labels(std::string_view ns, std::string_view set, std::string_view variant) {
  return {{"namespace", std::string(ns)}, {"runnerset", std::string(set)}, {"variant", std::string(variant)}};
}

// octorun_webhook_deliveries_total, read off the counters the intake keeps.
prometheus::MetricFamily deliveries_family(const github::intake_counters& c) {
  prometheus::MetricFamily f{
      "octorun_webhook_deliveries_total",
      "GitHub webhook deliveries by outcome: accepted (a workflow_job handed to the "
      "controller), duplicate (a delivery id seen before), replayed (a job's action seen before under "
      "another delivery id, or a queued job older than a job waits), bad_signature, malformed, "
      "ignored (another event or action), ping.",
      prometheus::MetricType::Counter,
      {}};
  const std::pair<const char*, const std::atomic<std::int64_t>*> outcomes[] = {
      {"accepted", &c.accepted},   {"duplicate", &c.duplicates},
      {"replayed", &c.replayed},   {"bad_signature", &c.bad_signature},
      {"malformed", &c.malformed}, {"ignored", &c.ignored},
      {"ping", &c.pings}};
  for (const auto& [outcome, value] : outcomes) {
    prometheus::ClientMetric m;
    m.label = {{"outcome", outcome}};
    m.counter.value = static_cast<double>(value->load());
    f.metric.push_back(std::move(m));
  }
  return f;
}

}  // namespace

const prometheus::Histogram::BucketBoundaries& job_queue_buckets() {
  static const prometheus::Histogram::BucketBoundaries b{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600};
  return b;
}

const prometheus::Histogram::BucketBoundaries& job_run_buckets() {
  static const prometheus::Histogram::BucketBoundaries b{10,   30,   60,   120,  300,   600,
                                                         1200, 1800, 3600, 7200, 14400, 21600};
  return b;
}

// From a second (the timestamps' precision: a phase within one second
// counts 0) to six hours (a job's longest run on GitHub-hosted runners).
const prometheus::Histogram::BucketBoundaries& job_phase_buckets() {
  static const prometheus::Histogram::BucketBoundaries b{1,   2,   5,   10,   20,   30,   60,
                                                         120, 300, 600, 1800, 3600, 7200, 21600};
  return b;
}

std::string result_label(std::string_view result) {
  if (result.empty()) return "unknown";
  std::string r(result);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::set<std::string, std::less<>> known = {
      "success",         "failure", "cancelled", "skipped", "timed_out", "neutral",
      "action_required", "stale",   "succeeded", "failed",  "canceled",  "abandoned"};
  return known.count(r) > 0 ? r : "other";
}

const prometheus::Histogram::BucketBoundaries& kube_latency_buckets() {
  static const prometheus::Histogram::BucketBoundaries b{0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                         0.5,   1,    2.5,   5,    10,  30};
  return b;
}

// The GitHub calls on one RunnerSet's credentials. Rate-limit series are
// per set (GitHub budgets per credential) and per x-ratelimit-resource; they
// stay while any observer of the set lives (a restarted set actor makes a
// new one before the old workers are gone) and go with the last.
class manager_metrics::github_requests : public github::request_observer {
 public:
  github_requests(std::shared_ptr<manager_metrics> owner, std::string ns, std::string set)
      : owner_(std::move(owner)), key_(std::move(ns), std::move(set)) {
    std::lock_guard lock(owner_->budgets_mutex_);
    ++owner_->budgets_[key_].holders;
  }
  ~github_requests() override {
    std::lock_guard lock(owner_->budgets_mutex_);
    auto& budgets = owner_->budgets_;
    auto it = budgets.find(key_);
    if (--it->second.holders > 0) return;
    for (auto& [resource, g] : it->second.gauges) {
      owner_->rate_limit_->Remove(g.limit);
      owner_->rate_remaining_->Remove(g.remaining);
      owner_->rate_reset_->Remove(g.reset);
    }
    budgets.erase(it);
  }

  void observe(std::string_view endpoint, long status, const github::rate_limit_info& rate) override {
    owner_->github_requests_
        ->Add({{"endpoint", std::string(endpoint)},
               {"status_class", std::string(github::status_class(status))}})
        .Increment();
    if (!rate.present || rate.limit < 0) return;
    std::lock_guard lock(owner_->budgets_mutex_);
    auto& gauges = owner_->budgets_[key_].gauges;
    // GitHub names a dozen budgets (core, graphql, actions_runner_registration,
    // ...); a header from elsewhere must not grow the label without bound.
    std::string resource = rate.resource.empty() ? "core" : rate.resource.substr(0, 64);
    const bool word = std::all_of(resource.begin(), resource.end(), [](unsigned char c) {
      return std::islower(c) || std::isdigit(c) || c == '_' || c == '-';
    });
    if (!word || (gauges.size() >= 16 && gauges.count(resource) == 0)) resource = "other";
    auto it = gauges.find(resource);
    if (it == gauges.end()) {
      Labels l{{"namespace", key_.first}, {"runnerset", key_.second}, {"resource", resource}};
      it =
          gauges
              .emplace(resource, budget_gauges{&owner_->rate_limit_->Add(l), &owner_->rate_remaining_->Add(l),
                                               &owner_->rate_reset_->Add(l)})
              .first;
    }
    it->second.limit->Set(static_cast<double>(rate.limit));
    if (rate.remaining >= 0) it->second.remaining->Set(static_cast<double>(rate.remaining));
    if (rate.reset_epoch > 0) it->second.reset->Set(static_cast<double>(rate.reset_epoch));
  }

 private:
  std::shared_ptr<manager_metrics> owner_;  // keeps the families alive
  std::pair<std::string, std::string> key_;
};

std::shared_ptr<manager_metrics> manager_metrics::make(const manager_identity& id,
                                                       const metrics_options& options) {
  return std::shared_ptr<manager_metrics>(new manager_metrics(id, options));
}

manager_metrics::manager_metrics(const manager_identity& id, const metrics_options& options)
    : options_(options) {
  // Every family is declared (declared.hpp).
  auto& r = *registry_;
  auto declare = [&](auto builder, const char* name, const char* help, prometheus::MetricType type) -> auto& {
    declared_.push_back({name, help, type, {}});
    return builder.Name(name).Help(help).Register(r);
  };
  auto counter = [&](const char* name, const char* help) -> prometheus::Family<prometheus::Counter>& {
    return declare(prometheus::BuildCounter(), name, help, prometheus::MetricType::Counter);
  };
  auto gauge = [&](const char* name, const char* help) -> prometheus::Family<prometheus::Gauge>& {
    return declare(prometheus::BuildGauge(), name, help, prometheus::MetricType::Gauge);
  };
  leader_ = &gauge("octorun_manager_leader", "1 while this replica holds the Lease and reconciles, else 0.")
                 .Add({{"identity", id.identity}});
  gauge("octorun_manager_info", "The manager's version; 1.")
      .Add({{"version", id.version}, {"commit", id.commit}, {"identity", id.identity}})
      .Set(1);
  actors_ = &gauge("octorun_manager_actors",
                   "Actors running in this replica: one per RunnerSet, Runner and listener session, "
                   "and the manager's own.")
                 .Add({});
  gauge("octorun_manager_start_time_seconds", "When this replica started, in seconds since the epoch.")
      .Add({})
      .SetToCurrentTime();
  kube_requests_ =
      &counter("octorun_kube_requests_total",
               "HTTP requests to the Kubernetes API server by verb, resource and status code (code "
               "\"error\": no response).");
  kube_duration_ =
      &declare(prometheus::BuildHistogram(), "octorun_kube_request_duration_seconds",
               "Time from sending a Kubernetes API request to the end of its answer, by verb and "
               "resource (watches, which stream for minutes, are not observed).",
               prometheus::MetricType::Histogram);
  github_requests_ =
      &counter("octorun_github_requests_total",
               "HTTP requests to GitHub (REST and the Actions service) by endpoint and status class "
               "(2xx ... 5xx; error: no response).");
  rate_limit_ = &gauge("octorun_github_rate_limit_limit",
                       "The request budget GitHub grants the RunnerSet's credentials per window "
                       "(x-ratelimit-limit), by rate-limit resource.");
  rate_remaining_ = &gauge("octorun_github_rate_limit_remaining",
                           "Requests left in the current window for the RunnerSet's credentials "
                           "(x-ratelimit-remaining of the last answer).");
  rate_reset_ = &gauge("octorun_github_rate_limit_reset_timestamp_seconds",
                       "When the RunnerSet's credentials' rate-limit window resets (x-ratelimit-reset), in "
                       "seconds since the epoch.");
  runners_created_ =
      &counter("octorun_runners_created_total", "Runners the manager created, by RunnerSet and variant.");
  runners_deleted_ =
      &counter("octorun_runners_deleted_total",
               "Runners the manager deleted, by RunnerSet, variant and reason: finished (a terminal "
               "phase), scaled_down (idle and not wanted), drained (its variant removed, or its "
               "RunnerSet deleted) or stuck_start (not online by its start-up deadline).");
  stuck_starts_ = &counter("octorun_stuck_starts_replaced_total",
                           "Runners that did not come online by their variant's start-up deadline "
                           "(spec.startupTimeoutSeconds, or derived from observed start-ups), by RunnerSet "
                           "and variant: each is removed unless it took a job, and replaced within "
                           "maxRunners.");
  reconcile_errors_ =
      &counter("octorun_reconcile_errors_total",
               "Requests made for a controller's actions that failed (an API error or a timeout), "
               "by controller and action; the action is retried on a later reconcile.");
  listener_open_ = &gauge("octorun_listener_session_open",
                          "1 while the variant's scale-set listener holds an open message session (Listener "
                          "intake), else 0.");
  listener_failures_ =
      &counter("octorun_listener_session_failures_total",
               "Scale-set listener incarnations that ended with an error; each is restarted with "
               "capped backoff.");
  jobs_started_ =
      &counter("octorun_jobs_started_total", "Jobs that started on the RunnerSet's runners, by variant.");
  jobs_completed_ = &counter("octorun_jobs_completed_total",
                             "Jobs that ended on the RunnerSet's runners, by variant and result (GitHub's "
                             "conclusion: success, failure, cancelled, ...; other, unknown).");
  job_queue_ = &declare(prometheus::BuildHistogram(), "octorun_job_queue_duration_seconds",
                        "Time from GitHub queueing a job to a runner of the set starting it, by variant "
                        "(GitHub's timestamps).",
                        prometheus::MetricType::Histogram);
  job_run_ = &declare(prometheus::BuildHistogram(), "octorun_job_run_duration_seconds",
                      "Time from a job starting on a runner of the set to its end, by variant (GitHub's "
                      "timestamps).",
                      prometheus::MetricType::Histogram);
  job_phase_ = &declare(prometheus::BuildHistogram(), "octorun_job_phase_seconds",
                        "Time of each phase of a job's way through the system, by variant and phase "
                        "(runner_created, pod_scheduled, containers_started, runner_online, job_started, "
                        "job_completed, runner_gone; docs/monitoring.md says from which point to which).",
                        prometheus::MetricType::Histogram);
  timestamp_problems_ =
      &counter("octorun_job_phase_timestamp_problems_total",
               "Phases not measured as their timestamps say, by phase and reason: missing, future, "
               "far_past, reordered (left out), skewed (counted as 0 s).");
  start_target_exceeded_ =
      &counter("octorun_jobs_start_target_exceeded_total",
               "Jobs that waited longer than the start target from GitHub queueing them to a runner of "
               "the set starting them, by variant.");
  runner_seconds_ = &counter("octorun_runner_seconds_total",
                             "Seconds the set's runners existed with their pod's resources reserved, by "
                             "variant, state (busy: running a job; idle) and the busy job's repository.");
  cpu_core_seconds_ = &counter("octorun_runner_cpu_request_core_seconds_total",
                               "The runners' pod CPU requests (cores) times the seconds they were reserved, "
                               "by variant, state and repository.");
  memory_byte_seconds_ =
      &counter("octorun_runner_memory_request_byte_seconds_total",
               "The runners' pod memory requests (bytes) times the seconds they were reserved, by variant, "
               "state and repository.");
  version_info_ =
      &gauge("octorun_runner_version_info",
             "The GitHub Actions runner version a variant runs (what its runners reported, else its "
             "runner image's tag; \"unknown\": neither says), 1.");
  version_health_ = &gauge(
      "octorun_runner_version_health",
      "The variant's runner version against GitHub's latest release, 1 for the current health: current, "
      "update_available, unknown, window_ending (the 30-day update window ends within 7 days), "
      "behind_minimum (older than GitHub's minimum, or the window has passed), deprecated (a runner "
      "exited as deprecated: no new runners until the template changes).");
  version_deadline_ =
      &gauge("octorun_runner_version_update_deadline_timestamp_seconds",
             "When the update window of GitHub's latest runner release ends for a variant that runs an older "
             "version (its publication + 30 days), in seconds since the epoch.");
}

std::string manager_metrics::scrape() const {
  if (count_actors_) actors_->Set(static_cast<double>(count_actors_()));
  auto families = complete(registry_->Collect(), declared_);
  families.push_back(deliveries_family(*deliveries_));
  for (auto& f : state_->Collect()) families.push_back(std::move(f));
  for (auto& f : collect_event_metrics()) families.push_back(std::move(f));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

void manager_metrics::set_leader(bool leading) { leader_->Set(leading ? 1 : 0); }

void manager_metrics::observe(const kube::request_kind& kind, long code,
                              std::chrono::duration<double> elapsed) {
  kube_requests_->Add({{"verb", kind.verb}, {"resource", kind.resource}, {"code", code_label(code)}})
      .Increment();
  if (kind.verb == "watch") return;
  kube_duration_->Add({{"verb", kind.verb}, {"resource", kind.resource}}, kube_latency_buckets())
      .Observe(elapsed.count());
}

void manager_metrics::runner_created(std::string_view ns, std::string_view set, std::string_view variant) {
  runners_created_->Add(set_labels(ns, set, variant)).Increment();
}

void manager_metrics::runner_deleted(std::string_view ns, std::string_view set, std::string_view variant,
                                     deletion_reason why) {
  auto l = set_labels(ns, set, variant);
  l.emplace("reason", std::string(reason_label(why)));
  runners_deleted_->Add(l).Increment();
}

void manager_metrics::stuck_start_replaced(std::string_view ns, std::string_view set,
                                           std::string_view variant) {
  stuck_starts_->Add(set_labels(ns, set, variant)).Increment();
}

void manager_metrics::reconcile_error(std::string_view controller, std::string_view action) {
  reconcile_errors_->Add({{"controller", std::string(controller)}, {"action", std::string(action)}})
      .Increment();
}

void manager_metrics::listener_session(std::string_view ns, std::string_view set, std::string_view variant,
                                       bool open) {
  std::lock_guard lock(listener_mutex_);
  listener_open_->Add(set_labels(ns, set, variant)).Set(open ? 1 : 0);
}

void manager_metrics::listener_stopped(std::string_view ns, std::string_view set, std::string_view variant) {
  std::lock_guard lock(listener_mutex_);
  listener_open_->Remove(&listener_open_->Add(set_labels(ns, set, variant)));
}

void manager_metrics::runner_version(std::string_view ns, std::string_view set, std::string_view variant,
                                     const model::version_verdict* verdict) {
  constexpr model::version_health healths[] = {
      model::version_health::current,        model::version_health::update_available,
      model::version_health::unknown,        model::version_health::window_ending,
      model::version_health::behind_minimum, model::version_health::deprecated};
  std::lock_guard lock(versions_mutex_);
  const auto l = set_labels(ns, set, variant);
  const auto key = std::make_tuple(std::string(ns), std::string(set), std::string(variant));
  if (auto was = version_labels_.find(key); was != version_labels_.end()) {
    auto info = l;
    info.emplace("version", was->second);
    version_info_->Remove(&version_info_->Add(info));
    version_labels_.erase(was);
  }
  for (auto h : healths) {
    auto hl = l;
    hl.emplace("health", std::string(model::to_string(h)));
    auto& g = version_health_->Add(hl);
    if (verdict == nullptr)
      version_health_->Remove(&g);
    else
      g.Set(verdict->health == h ? 1 : 0);
  }
  auto& deadline = version_deadline_->Add(l);
  if (verdict == nullptr || verdict->update_deadline == 0)
    version_deadline_->Remove(&deadline);
  else
    deadline.Set(static_cast<double>(verdict->update_deadline));
  if (verdict == nullptr) return;
  // Bounded: three numbers of at most six digits (model::runner_version), or "unknown".
  const auto version = verdict->running ? verdict->running->to_string() : std::string("unknown");
  auto info = l;
  info.emplace("version", version);
  version_info_->Add(info).Set(1);
  version_labels_.emplace(key, version);
}

void manager_metrics::listener_failed(std::string_view ns, std::string_view set, std::string_view variant) {
  listener_failures_->Add(set_labels(ns, set, variant)).Increment();
}

void manager_metrics::record_phases(const Labels& set_labels, const model::phase_measurement& m) {
  for (const auto& sample : m.samples) {
    auto l = set_labels;
    l.emplace("phase", std::string(model::to_string(sample.phase)));
    job_phase_->Add(l, job_phase_buckets()).Observe(static_cast<double>(sample.seconds));
  }
  for (const auto& drop : m.drops) {
    auto l = set_labels;
    l.emplace("phase", std::string(model::to_string(drop.phase)));
    l.emplace("reason", std::string(model::to_string(drop.problem)));
    timestamp_problems_->Add(l).Increment();
  }
}

void manager_metrics::job_started(std::string_view ns, std::string_view set, std::string_view variant,
                                  const messages::job_info& job) {
  const auto l = set_labels(ns, set, variant);
  jobs_started_->Add(l).Increment();
  // The message came: both points are reached (0: the message did not say when).
  model::job_timeline t;
  t.queued = job.queued_at;
  t.started = job.started_at;
  const auto m = model::measure(t, {model::job_phase::job_started}, options_.now(), options_.timeline);
  record_phases(l, m);
  for (const auto& sample : m.samples) {
    job_queue_->Add(l, job_queue_buckets()).Observe(static_cast<double>(sample.seconds));
    if (sample.seconds > options_.job_start_target_seconds) start_target_exceeded_->Add(l).Increment();
  }
}

void manager_metrics::job_completed(std::string_view ns, std::string_view set, std::string_view variant,
                                    std::string_view result, const messages::job_info& job) {
  auto l = set_labels(ns, set, variant);
  model::job_timeline t;
  t.started = job.started_at;
  t.completed = job.completed_at;
  const auto m = model::measure(t, {model::job_phase::job_completed}, options_.now(), options_.timeline);
  record_phases(l, m);
  for (const auto& sample : m.samples)
    job_run_->Add(l, job_run_buckets()).Observe(static_cast<double>(sample.seconds));
  l.emplace("result", result_label(result));
  jobs_completed_->Add(l).Increment();
}

std::string manager_metrics::repository_value(std::string_view ns, std::string_view set,
                                              std::string_view repository) {
  const std::string_view label = model::repository_label(repository);
  if (label.empty() || label == "invalid") return std::string(label);
  std::lock_guard lock(repositories_mutex_);
  auto& seen = repositories_[{std::string(ns), std::string(set)}];
  if (seen.count(label) > 0) return std::string(label);
  if (seen.size() >= options_.repositories_per_set) return "other";
  return *seen.emplace(label).first;
}

void manager_metrics::runner_gone(std::string_view ns, std::string_view set, std::string_view variant,
                                  const runner_end& end) {
  const auto l = set_labels(ns, set, variant);
  const std::int64_t gone = end.timeline.gone.value_or(options_.now());
  record_phases(l, model::measure(end.timeline, model::phases_at_runner_end, gone, options_.timeline));
  const auto usage = model::usage_of(end.timeline, gone, options_.timeline);
  const std::string repository = repository_value(ns, set, end.repository);
  const std::pair<const char*, std::int64_t> parts[] = {{"busy", usage.busy_seconds},
                                                        {"idle", usage.idle_seconds}};
  for (const auto& [state, seconds] : parts) {
    if (seconds <= 0) continue;
    auto cost = l;
    cost.emplace("state", state);
    cost.emplace("repository", std::string(state) == "busy" ? repository : std::string());
    const auto s = static_cast<double>(seconds);
    runner_seconds_->Add(cost).Increment(s);
    cpu_core_seconds_->Add(cost).Increment(s * end.requests.cpu_cores);
    memory_byte_seconds_->Add(cost).Increment(s * end.requests.memory_bytes);
  }
}

std::shared_ptr<github::request_observer> manager_metrics::github_observer(std::string_view ns,
                                                                           std::string_view set) {
  return std::make_shared<github_requests>(shared_from_this(), std::string(ns), std::string(set));
}

}  // namespace octorun::metrics
