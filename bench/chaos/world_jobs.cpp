// The world's bookkeeping of what the harness did (jobs, deliveries,
// faults) and the end-of-run accounting of every job.
#include <rapidjson/document.h>

#include "bench/chaos/world.hpp"
#include "common/json.hpp"
#include "test/support/poll.hpp"

namespace octorun::chaos {

void world::job_queued(std::int64_t id, const std::string& pool, bool webhook) {
  std::lock_guard l(mu_);
  auto& j = jobs_[id];
  j.id = id;
  j.pool = pool;
  j.webhook = webhook;
  j.queued_at = tl_.now();
  j.under_fault = under_fault();
}

void world::cancel_requested(std::int64_t id) {
  std::lock_guard l(mu_);
  if (auto j = jobs_.find(id); j != jobs_.end()) j->second.cancel_requested = true;
}

void world::delivery(const std::string& body, const std::string& accepted_by, const std::string& failure) {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  if (d.HasParseError()) return;
  const auto* job = json::member(d, "workflow_job");
  if (job == nullptr) return;
  std::int64_t id = json::i64(*job, "id");
  std::string action = json::str(d, "action");
  std::lock_guard l(mu_);
  auto& j = jobs_[id];  // the delivery may overtake job_queued
  j.id = id;
  if (action == "queued") {
    j.queued_deliveries.push_back(accepted_by.empty() ? failure : "accepted by " + accepted_by);
  }
  if (!failure.empty()) tl_.add("relay", action + " of job " + std::to_string(id) + " lost: " + failure);
}

void world::evicting(const std::string& ns, const std::string& pod) {
  std::lock_guard l(mu_);
  evicted_.insert(ns + "/" + pod);
}

void world::node_gone(bool gone) {
  std::lock_guard l(mu_);
  node_gone_ = gone;
}

void world::namespace_deleting(const std::string& ns, bool deleting) {
  std::lock_guard l(mu_);
  if (deleting) {
    ns_deleting_.insert(ns);
    ns_deleted_at_[ns] = tl_.now();
  } else {
    ns_deleting_.erase(ns);
  }
}

void world::fault_started() { ++faults_active_; }

void world::fault_ended() {
  --faults_active_;
  fault_tail_until_ = tl_.now() + 30;  // its effects outlast it
}

bool world::under_fault() const { return faults_active_ > 0 || tl_.now() < fault_tail_until_; }

std::vector<std::pair<std::string, std::string>> world::pods(bool busy) const {
  std::lock_guard l(mu_);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, p] : pods_) {
    if (!p.running || p.deleting || p.exited) continue;
    auto r = sim_runners_.find(p.name);
    if (r == sim_runners_.end() || !r->second.online || r->second.busy != busy) continue;
    out.emplace_back(p.ns, p.name);
  }
  return out;
}

std::size_t world::runners(const std::string& ns) const {
  std::lock_guard l(mu_);
  std::size_t n = 0;
  for (const auto& [key, r] : runners_) n += r.ns == ns && !r.gone ? 1 : 0;
  return n;
}

std::string world::lost_cause(const job_record& j) const {
  auto p = pools_.find(j.pool);
  if (p != pools_.end()) {
    if (auto d = ns_deleted_at_.find(p->second.ns); d != ns_deleted_at_.end() && d->second >= j.queued_at)
      return "its RunnerSet's namespace was deleted by the harness";
  }
  // Nothing else excuses a job: a webhook delivery that reached no replica,
  // or one taken by a replica that stopped, is found again by the leader's
  // sweep of GitHub's queue (docs/intakes.md), like the listener's jobs.
  return {};
}

bool world::drain(std::chrono::seconds within) {
  auto open = [&] {
    std::lock_guard l(mu_);
    std::size_t n = 0;
    for (const auto& [id, j] : jobs_)
      if (j.state != "completed" && (j.started_at >= 0 || lost_cause(j).empty())) ++n;
    return n;
  };
  return test::poll(
             open, [](std::size_t n) { return n == 0; }, within)
      .met;
}

world::jobs_summary world::account_jobs() {
  // Deliveries the simulator dropped (the lost-delivery fault) never reached the relay.
  for (const auto& d : sim_.dropped_deliveries())
    delivery(d.body, "", "the simulator dropped it (lost-delivery fault)");
  std::lock_guard l(mu_);
  jobs_summary s;
  for (const auto& [id, j] : jobs_) {
    ++s.queued;
    if (j.started_at >= 0) {
      double q = j.started_at - j.queued_at;
      s.queue_all.push_back(q);
      (j.under_fault ? s.queue_under_fault : s.queue_calm).push_back(q);
    }
    if (j.state == "completed") {
      if (j.result == "succeeded")
        ++s.succeeded;
      else if (j.result == "canceled" && j.cancel_requested)
        ++s.canceled;
      else if (j.result == "failed")
        ++s.failed_by_fault;  // its runner's pod was killed: busy-runner says by whom
      else
        record({tl_.now(), "exactly-once",
                "job " + std::to_string(id) + " ended " + j.result + " (nobody cancelled it)"});
      continue;
    }
    auto cause = j.started_at >= 0 ? std::string{} : lost_cause(j);
    if (!cause.empty()) {
      ++s.lost_known_cause;
      ++s.lost_by_cause[cause.substr(0, cause.find(" ("))];
      tl_.add("job", std::to_string(id) + " (" + j.pool + ") lost: " + cause);
      continue;
    }
    ++s.lost_unexplained;
    std::string deliveries;
    for (const auto& d : j.queued_deliveries) deliveries += " [" + d + "]";
    record({j.queued_at, "exactly-once",
            "job " + std::to_string(id) + " (" + j.pool + ", queued at " +
                std::to_string(static_cast<int>(j.queued_at)) + " s) never " +
                (j.started_at >= 0 ? "completed" : "ran") + "; state " + j.state +
                (j.webhook ? "; its queued deliveries:" + deliveries : "") + "; no fault explains it"});
  }
  return s;
}

std::vector<violation> world::violations() const {
  std::lock_guard l(mu_);
  return violations_;
}

void world::add_violation(const std::string& invariant, const std::string& text) {
  std::lock_guard l(mu_);
  record({tl_.now(), invariant, text});
}

void world::record(violation v) {
  tl_.add("VIOLATION", v.invariant + ": " + v.text);
  violations_.push_back(std::move(v));
}

}  // namespace octorun::chaos
