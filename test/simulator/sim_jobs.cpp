// Jobs as the simulator moves them: queued, handed to the first scale set
// whose scope and labels fit (JobAvailable, within its X-ScaleSetMaxCapacity),
// acquired, started on a runner, completed after duration_ms (the timer
// thread) or by hand, cancelled or failed with a lost runner; an assignment
// no runner takes in time goes back to the scale set (GitHub's reassignment).
// Each transition posts its scale-set message and its workflow_job webhook
// (sim_webhooks.cpp). The simulator's clock is here too.
#include <vector>

#include "common/rfc3339.hpp"
#include "test/simulator/simulator_impl.hpp"

namespace octorun::sim {

namespace json = octorun::json;

std::string simulator::impl::statistics_json(std::int64_t ssid) const {
  std::int64_t available = 0, acquired = 0, assigned = 0, running = 0, registered = 0, busy = 0;
  for (auto id : open_jobs) {
    const auto& j = jobs.at(id);
    if (j.scale_set_id != ssid) continue;
    if (j.state == "queued" && j.offered) ++available;
    if (j.state == "assigned") ++acquired;
    if (j.state == "assigned" || j.state == "running") ++assigned;
    if (j.state == "running") ++running;
  }
  for (const auto& [id, r] : runners) {
    if (r.scale_set_id != ssid || ssid == 0) continue;
    ++registered;
    if (r.busy) ++busy;
  }
  return "{\"totalAvailableJobs\":" + std::to_string(available) +
         ",\"totalAcquiredJobs\":" + std::to_string(acquired) +
         ",\"totalAssignedJobs\":" + std::to_string(assigned) +
         ",\"totalRunningJobs\":" + std::to_string(running) +
         ",\"totalRegisteredRunners\":" + std::to_string(registered) +
         ",\"totalBusyRunners\":" + std::to_string(busy) +
         ",\"totalIdleRunners\":" + std::to_string(registered - busy) + "}";
}

// A job message carries the times of the events that have happened to the
// job so far; the others are left out (the clients read absent as zero).
std::string simulator::impl::job_message_json(const char* type, const sim_job& j,
                                              const std::string& result) const {
  auto slash = j.spec.repository.find('/');
  std::string owner = j.spec.repository.substr(0, slash);
  std::string repo = slash == std::string::npos ? j.spec.repository : j.spec.repository.substr(slash + 1);
  auto time = [](const char* key, const std::optional<wall_clock::time_point>& t) {
    return t ? std::string(",\"") + key + "\":\"" + format_rfc3339_micros(*t) + "\"" : std::string();
  };
  std::string out =
      std::string("{\"messageType\":\"") + type + "\",\"runnerRequestId\":" + std::to_string(j.id) +
      ",\"repositoryName\":" + json::quote(repo) + ",\"ownerName\":" + json::quote(owner) +
      ",\"jobId\":" + json::quote(j.guid) + ",\"jobWorkflowRef\":" +
      json::quote(j.spec.repository + "/.github/workflows/" + j.spec.workflow + "@refs/heads/main") +
      ",\"jobDisplayName\":" + json::quote(j.spec.name) +
      ",\"eventName\":\"push\",\"workflowRunId\":" + std::to_string(j.run_id) +
      ",\"requestLabels\":" + strings_json(j.spec.labels) + time("queueTime", j.queued_at) +
      time("scaleSetAssignTime", j.scale_set_assigned_at) + time("runnerAssignTime", j.runner_assigned_at) +
      time("finishTime", j.finished_at);
  std::string t = type;
  if (t == "JobAvailable")
    out += ",\"acquireJobUrl\":" +
           json::quote(tenant_url(scale_sets.at(j.scale_set_id).tenant_id) +
                       "_apis/runtime/runnerscalesets/" + std::to_string(j.scale_set_id) + "/acquirejobs");
  if (t == "JobStarted" || t == "JobCompleted")
    out += ",\"runnerId\":" + std::to_string(j.runner_id) + ",\"runnerName\":" + json::quote(j.runner_name);
  if (t == "JobCompleted") out += ",\"result\":" + json::quote(result.empty() ? j.result : result);
  return out + "}";
}

void simulator::impl::post_message(std::int64_t ssid, std::string job_json) {
  auto& q = queues[ssid];
  if (!q.empty() && !q.back().delivered && q.back().jobs.size() < 50) {
    q.back().jobs.push_back(std::move(job_json));
  } else {
    q.push_back(sim_message{next_message_id++, {std::move(job_json)}, false});
  }
  queue_cv.notify_all();
}

// X-ScaleSetMaxCapacity: the service does not hand a scale set more jobs than
// its listener says it can run. GitHub's exact rule is not public; here the
// jobs handed out and not finished (offered, acquired or running) stay within
// the capacity of the latest poll, the rest wait in queue order.
void simulator::impl::offer_jobs(std::int64_t ssid) {
  auto ss = scale_sets.find(ssid);
  if (ss == scale_sets.end()) return;
  std::int64_t out = 0;
  for (auto id : open_jobs)
    if (const auto& j = jobs.at(id); j.scale_set_id == ssid && j.offered) ++out;
  for (auto id : open_jobs) {
    auto& j = jobs.at(id);
    if (ss->second.max_capacity && out >= *ss->second.max_capacity) break;
    if (j.scale_set_id != ssid || j.offered || j.state != "queued") continue;
    j.offered = true;
    ++out;
    post_message(ssid, job_message_json("JobAvailable", j));
  }
}

std::string simulator::impl::job_json(const sim_job& j, const std::string& status) {
  const bool completed = status == "completed";
  std::string conclusion = "null";
  if (completed)
    conclusion = json::quote(j.result == "succeeded"  ? "success"
                             : j.result == "failed"   ? "failure"
                             : j.result == "canceled" ? "cancelled"
                                                      : j.result);
  bool has_runner = status != "queued" && j.runner_id != 0;  // a job cancelled before it ran has none
  std::int64_t group_id = 1;
  std::string group_name = "Default";
  if (auto r = runners.find(j.runner_id); r != runners.end() && r->second.scale_set_id == 0)
    if (auto g = runner_group(r->second.scope_key, r->second.group_id)) {
      group_id = g->id;
      group_name = g->name;
    }
  auto at = [](const std::optional<wall_clock::time_point>& t) {
    return t ? "\"" + format_rfc3339(wall_clock::to_time_t(*t)) + "\"" : std::string("null");
  };
  return "{\"id\":" + std::to_string(j.id) + ",\"run_id\":" + std::to_string(j.run_id) +
         ",\"run_attempt\":1,\"node_id\":\"WJ_" + std::to_string(j.id) +
         "\",\"head_sha\":\"0000000000000000000000000000000000000000\",\"head_branch\":\"main\",\"url\":" +
         json::quote(base + "/api/v3/repos/" + j.spec.repository + "/actions/jobs/" + std::to_string(j.id)) +
         ",\"html_url\":" +
         json::quote("https://github.com/" + j.spec.repository + "/actions/runs/" +
                     std::to_string(j.run_id)) +
         ",\"status\":\"" + status + "\",\"conclusion\":" + conclusion +
         ",\"created_at\":" + at(j.queued_at) +
         ",\"started_at\":" + (has_runner ? at(j.runner_assigned_at) : "null") +
         ",\"completed_at\":" + (completed ? at(j.finished_at) : "null") +
         ",\"name\":" + json::quote(j.spec.name) + ",\"steps\":[],\"labels\":" + strings_json(j.spec.labels) +
         ",\"runner_id\":" + (has_runner ? std::to_string(j.runner_id) : "null") +
         ",\"runner_name\":" + (has_runner ? json::quote(j.runner_name) : "null") +
         ",\"runner_group_id\":" + (has_runner ? std::to_string(group_id) : "null") +
         ",\"runner_group_name\":" + (has_runner ? json::quote(group_name) : "null") +
         ",\"workflow_name\":" + json::quote(j.spec.workflow) + "}";
}

std::string simulator::impl::job_status(const sim_job& j) {
  if (j.state == "completed") return "completed";
  return j.state == "running" ? "in_progress" : "queued";  // assigned to a scale set: still queued
}
std::int64_t simulator::impl::new_job(const job_spec& spec) {
  sim_job j;
  j.id = next_job_id++;
  j.run_id = j.id + 3'000'000'000;
  j.guid = new_uuid();
  j.spec = spec;
  j.queued_at = wall_now();
  for (const auto& [id, s] : scale_sets) {
    const auto* t = tenant_by_id(s.tenant_id);
    if (t != nullptr && scope_covers(t->scope_key, spec.repository) && labels_match(spec.labels, s.labels)) {
      j.scale_set_id = id;
      break;
    }
  }
  auto& stored = jobs[j.id] = j;
  open_jobs.insert(j.id);
  if (stored.scale_set_id != 0) offer_jobs(stored.scale_set_id);
  webhook_job("queued", stored);
  dispatch();
  changed();
  return stored.id;
}

void simulator::impl::start_job(sim_job& j, sim_runner& r) {
  j.state = "running";
  j.runner_name = r.name;
  j.runner_id = r.id;
  j.runner_assigned_at = wall_now();
  j.assignment_due.reset();
  r.busy = true;
  r.job_id = j.id;
  if (j.scale_set_id != 0) post_message(j.scale_set_id, job_message_json("JobStarted", j));
  webhook_job("in_progress", j);
  if (j.spec.duration.count() >= 0) {
    j.due = steady_now() + j.spec.duration;
    timer_cv.notify_all();
  }
}

void simulator::impl::finish_job(sim_job& j, const std::string& result) {
  j.state = "completed";
  open_jobs.erase(j.id);
  j.result = result;
  j.finished_at = wall_now();
  j.due.reset();
  j.assignment_due.reset();
  if (j.scale_set_id != 0) post_message(j.scale_set_id, job_message_json("JobCompleted", j));
  webhook_job("completed", j);
  // JIT runners are ephemeral: GitHub unregisters them after their one job.
  if (auto r = runners.find(j.runner_id); r != runners.end()) {
    if (r->second.scale_set_id != 0) removed_after_job[r->first] = r->second.tenant_id;
    runners.erase(r);
  }
  if (j.scale_set_id != 0) offer_jobs(j.scale_set_id);
  changed();
}

void simulator::impl::cancel(sim_job& j) {
  finish_job(j, "canceled");
  dispatch();
}

// GitHub's reassignment (actions/scaleset README, "Job Reassignment"): "Jobs
// may appear multiple times as JobAssigned followed by JobCompleted (with
// result: canceled) ... GitHub cancels the assignment and requeues the job.
// This can happen up to 3 times". After the last the job is cancelled, as
// GitHub cancels a job "not acquired by Runner ... even after multiple
// attempts" (no runner, no steps).
void simulator::impl::assignment_expired(sim_job& j) {
  if (j.requeues >= options.max_requeues) {
    cancel(j);
    return;
  }
  ++j.requeues;
  const bool scale_set_exists = scale_sets.count(j.scale_set_id) > 0;
  if (scale_set_exists) post_message(j.scale_set_id, job_message_json("JobCompleted", j, "canceled"));
  j.state = "queued";
  j.offered = false;
  j.scale_set_assigned_at.reset();
  j.assignment_due.reset();
  if (scale_set_exists)
    offer_jobs(j.scale_set_id);
  else
    j.scale_set_id = 0;  // its scale set was deleted: it waits for another runner
  dispatch();
  changed();
}

void simulator::impl::lose(sim_runner& r) {
  r.online = false;
  auto j = jobs.find(r.job_id);
  if (r.busy && j != jobs.end() && j->second.state == "running")
    finish_job(j->second, "failed");  // erases the runner
  changed();
}

void simulator::impl::dispatch() {
  for (auto& [rid, r] : runners) {
    if (!r.online || r.busy) continue;
    for (auto jid : open_jobs) {
      auto& j = jobs.at(jid);
      bool fits = false;
      if (r.scale_set_id != 0) {
        fits = j.scale_set_id == r.scale_set_id && j.state == "assigned";
      } else if (j.scale_set_id == 0 && j.state == "queued" && labels_match(j.spec.labels, r.labels)) {
        fits = scope_covers(r.scope_key, j.spec.repository);
      }
      if (fits) {
        start_job(j, r);
        break;
      }
    }
  }
}

clock_type::time_point simulator::impl::steady_now() const { return clock_type::now() + skipped; }
wall_clock::time_point simulator::impl::wall_now() const { return wall_clock::now() + skipped; }

void simulator::impl::advance(std::chrono::milliseconds by) {
  skipped += by;
  run_due();
  timer_cv.notify_all();  // the timer's next wake-up is nearer now
  queue_cv.notify_all();  // and so are the long polls' deadlines
  changed();
}

std::optional<clock_type::time_point> simulator::impl::run_due() {
  for (;;) {
    std::optional<clock_type::time_point> next;
    // finish_job leaves open_jobs: not while walking it.
    std::vector<std::int64_t> due, expired;
    const auto now_tp = steady_now();
    for (auto id : open_jobs) {
      const auto& j = jobs.at(id);
      const auto& at = j.state == "running" ? j.due : j.assignment_due;
      if (!at || (j.state != "running" && j.state != "assigned")) continue;
      if (*at <= now_tp)
        (j.state == "running" ? due : expired).push_back(id);
      else if (!next || *at < *next)
        next = at;
    }
    for (auto id : due) {
      auto& j = jobs.at(id);
      finish_job(j, j.spec.result);
      dispatch();
    }
    for (auto id : expired)  // unless a runner freed above took it
      if (auto& j = jobs.at(id); j.state == "assigned") assignment_expired(j);
    // The runners those completions freed may have started jobs due before
    // `next` (their notifications came while this thread held the lock).
    if (due.empty() && expired.empty()) return next;
  }
}

void simulator::impl::run_timer() {
  lock_type lock(mu);
  while (!stopping) {
    // `next` is on the simulator's clock, the wait on the real one.
    if (auto next = run_due())
      timer_cv.wait_until(lock, *next - skipped);
    else
      timer_cv.wait(lock);
  }
}

}  // namespace octorun::sim
