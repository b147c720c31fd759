#include "bench/common/lifecycle.hpp"

#include <rapidjson/document.h>

#include <algorithm>

#include "actors/runnerset/scaling.hpp"
#include "adapters/kube/client.hpp"
#include "adapters/kube/informer.hpp"
#include "bench/common/reflector_thread.hpp"
#include "common/json.hpp"
#include "model/runner_phase.hpp"

namespace octorun::bench {
namespace {

const char* runner_label = "octorun.io/runner";

std::string status_field(const kube::object& o, const char* field) {
  const auto* status = o.member("status");
  return status == nullptr ? std::string() : json::str(*status, field);
}

void first(double& slot, double now) {
  if (slot == 0) slot = now;
}

}  // namespace

double unix_ms_now() {
  return std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool holds_a_slot(const std::string& phase, bool deleting) {
  runnerset::runner_view runner;
  runner.phase = model::parse_runner_phase(phase).value_or(model::runner_phase::unset);
  runner.deleting = deleting;
  return runnerset::holds_capacity(runner);
}

lifecycle_watch::lifecycle_watch(const kube::config& cfg, const std::string& ns,
                                 pod_running_fn on_pod_running, const std::string& selector)
    : on_pod_running_(std::move(on_pod_running)) {
  auto reflect = [&](kube::resource res, kind k, std::string labels) {
    kube::reflector_callbacks cb;
    cb.replaced = [this, k](kube::object_list l) {
      for (auto& item : l.items) on_object(k, item, false);
      std::lock_guard lock(mu_);
      ++synced_;
      changed_.notify_all();
    };
    cb.event = [this, k](kube::watch_event ev) {
      if (ev.type == kube::event_type::error) return;
      on_object(k, ev.obj, ev.type == kube::event_type::deleted);
    };
    threads_.push_back(start_reflector(cfg, std::move(res), ns, std::move(labels), std::move(cb), stop_));
  };
  auto children = selector.empty() ? std::string(runner_label) : selector;
  reflect({"octorun.io", "v1alpha1", "runners", true}, kind::runner, selector);
  reflect({"", "v1", "pods", true}, kind::pod, children);
  reflect({"", "v1", "secrets", true}, kind::secret, children);
}

lifecycle_watch::~lifecycle_watch() {
  stop_ = true;
  for (auto& t : threads_) t.join();
}

void lifecycle_watch::on_object(kind k, const kube::object& o, bool deleted) {
  const double now = unix_ms_now();
  if (k == kind::runner) return on_runner(o, deleted, now);
  if (k == kind::pod) return on_pod(o, deleted, now);
  std::string runner(o.label(runner_label));
  if (runner.empty()) return;
  {
    std::lock_guard lock(mu_);
    auto& t = times_[runner];
    first(deleted ? t.secret_deleted : t.secret, now);
  }
  changed_.notify_all();
}

void lifecycle_watch::on_runner(const kube::object& o, bool deleted, double now) {
  std::string name(o.name);
  auto phase = status_field(o, "phase");
  {
    std::lock_guard lock(mu_);
    auto& t = times_[name];
    first(t.created, now);
    if (phase == "Pending") first(t.pending, now);
    if (phase == "Running") first(t.running, now);
    if (phase == "Succeeded") first(t.succeeded, now);
    if (phase == "Failed" || phase == "Outdated") first(t.failed, now);
    if (!o.deletion_timestamp.empty()) first(t.deleting, now);
    if (deleted) {
      first(t.deleted, now);
      runners_.erase(name);
    } else {
      auto [it, added] = runners_.try_emplace(name);
      if (added) ++runners_seen_;
      it->second.phase = phase;
      it->second.deleting = !o.deletion_timestamp.empty();
      max_runners_ = std::max(max_runners_, runners_.size());
      // As the manager bounds its runners by maxRunners (holds_a_slot).
      auto active = std::count_if(runners_.begin(), runners_.end(), [](const auto& r) {
        return holds_a_slot(r.second.phase, r.second.deleting);
      });
      max_active_ = std::max(max_active_, static_cast<std::size_t>(active));
    }
  }
  changed_.notify_all();
}

void lifecycle_watch::on_pod(const kube::object& o, bool deleted, double now) {
  std::string runner(o.label(runner_label));
  if (runner.empty()) return;
  const auto* spec = o.member("spec");
  bool scheduled = spec != nullptr && !json::str(*spec, "nodeName").empty();
  bool running = status_field(o, "phase") == "Running";
  bool go_online = false;
  {
    std::lock_guard lock(mu_);
    auto& t = times_[runner];
    first(t.pod, now);
    if (scheduled) first(t.pod_scheduled, now);
    if (running) first(t.pod_running, now);
    if (deleted) {
      first(t.pod_deleted, now);
      pods_.erase(runner);
    } else {
      auto& online = pods_[runner];
      go_online = running && !online && o.deletion_timestamp.empty();
      online = online || go_online;
      max_pods_ = std::max(max_pods_, pods_.size());
    }
  }
  // The pod is named after its Runner, whose GitHub runner has that name.
  if (go_online && on_pod_running_) on_pod_running_(runner);
  changed_.notify_all();
}

std::map<std::string, runner_times> lifecycle_watch::times() const {
  std::lock_guard lock(mu_);
  return times_;
}

runner_counts lifecycle_watch::counts() const {
  std::lock_guard lock(mu_);
  runner_counts c;
  c.total = runners_.size();
  c.pods = pods_.size();
  for (const auto& [name, r] : runners_) {
    if (r.deleting) {
      ++c.deleting;
    } else if (r.phase == "Running") {
      ++c.busy;
    } else if (r.phase == "Succeeded" || r.phase == "Failed" || r.phase == "Outdated") {
      ++c.finished;
    } else {
      auto pod = pods_.find(name);
      (r.phase == "Pending" && pod != pods_.end() && pod->second) ? ++c.idle : ++c.starting;
    }
  }
  return c;
}

std::size_t lifecycle_watch::max_runners() const {
  std::lock_guard lock(mu_);
  return max_runners_;
}

std::size_t lifecycle_watch::max_active_runners() const {
  std::lock_guard lock(mu_);
  return max_active_;
}

std::size_t lifecycle_watch::max_pods() const {
  std::lock_guard lock(mu_);
  return max_pods_;
}

std::size_t lifecycle_watch::runners_seen() const {
  std::lock_guard lock(mu_);
  return runners_seen_;
}

bool lifecycle_watch::synced() const {
  std::lock_guard lock(mu_);
  return synced_ >= 3;
}

bool lifecycle_watch::wait(const std::function<bool(const lifecycle_watch&)>& pred,
                           std::chrono::milliseconds within, const std::atomic<bool>* stop) const {
  auto deadline = std::chrono::steady_clock::now() + within;
  for (;;) {
    if (pred(*this)) return true;
    if (std::chrono::steady_clock::now() >= deadline || (stop != nullptr && stop->load())) return false;
    std::unique_lock lock(mu_);
    // Woken by every event; the bound covers an event between the check and
    // the wait, and a stop flag set by a signal handler.
    changed_.wait_until(
        lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(200)));
  }
}

}  // namespace octorun::bench
