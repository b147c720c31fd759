#include "actors/runnerset/stuck_start.hpp"

#include <algorithm>

namespace octorun::runnerset {

std::string stuck_start_wake(const std::string& variant) { return "stuck-start " + variant; }

void note_runner_seen(set_observation& w, const std::string& runner, time_point now) {
  auto it = w.runners.find(runner);
  if (it != w.runners.end() && it->second.seen_at == time_point{}) it->second.seen_at = now;
}

void note_runner_pod(set_observation& w, const std::string& runner, const model::runner_pod& pod) {
  auto it = w.runners.find(runner);
  if (it == w.runners.end() || !pod.ready) return;
  auto& r = it->second;
  r.came_online = true;
  if (r.startup_sampled || pod.ready_at <= 0 || r.view.created <= 0) return;
  r.startup_sampled = true;
  r.pod_ready_at = pod.ready_at;
  // r.node_wait: the part that was a wait for a node (note_runner_scheduled,
  // heard first): a start-time target may size without it.
  w.startups[r.variant].add(pod.ready_at - r.view.created, {}, w.now);
  const auto process = w.runner_process_starts.find(r.variant);
  const auto process_p95 =
      process == w.runner_process_starts.end() ? std::nullopt : p95(process->second.seconds);
  r.online_estimate = pod.ready_at - r.view.created + process_p95.value_or(0);
  r.online_estimate_heard = w.now;
  w.online_startups[r.variant].add(*r.online_estimate, {}, w.now, r.node_wait);
}

void note_job_start(set_observation& w, const std::string& runner, const messages::job_info& job) {
  auto it = w.runners.find(runner);
  if (it == w.runners.end()) return;
  auto& r = it->second;
  r.job_start_heard = true;
  if (r.whole_start_sampled || job.queued_at <= 0 || job.started_at <= 0 || r.view.created <= 0 ||
      job.queued_at > r.view.created)
    return;
  r.whole_start_sampled = true;
  // Measured now: it replaces the runner's estimate from its pod ready.
  auto& online = w.online_startups[r.variant];
  const auto whole = job.started_at - r.view.created;
  if (!r.online_estimate || !online.replace(r.online_estimate_heard, *r.online_estimate, whole))
    online.add(whole, {}, w.now, r.node_wait);
  r.online_estimate.reset();
  if (r.pod_ready_at > 0) w.runner_process_starts[r.variant].add(job.started_at - r.pod_ready_at, {}, w.now);
}

namespace {

// Anything says it started (a job, or online once).
bool started(const observed_runner& r, time_point now) {
  const auto& v = r.view;
  return v.finished() || v.busy() || v.pod_ready || r.came_online || r.job_start_heard || r.job_completed ||
         r.busy_until > now;
}

}  // namespace

startup_deadline startup_deadline_of(const set_observation& o, const model::effective_variant& v) {
  auto samples = o.startups.find(v.name);
  return startup_deadline_for(v.startup_timeout_seconds,
                              samples == o.startups.end() ? startup_samples{} : samples->second);
}

bool replaces_stuck_starts(const set_observation& o) {
  return o.runner_registration_error.empty() && !paused(o.budget, o.now);
}

runner_view as_leaving(runner_view view) {
  view.has_job = false;
  view.deleting = true;
  return view;
}

start_check check_starts(const set_observation& o, const std::string& variant, std::chrono::seconds deadline,
                         bool find_new) {
  start_check out;
  for (const auto& [name, r] : o.runners) {
    if (r.variant != variant || r.seen_at == time_point{} || started(r, o.now)) continue;
    // Its removal is under way: leaving until it is gone (being deleted
    // or not, its DELETE answered or not), whatever holds new ones back.
    if (r.stuck_start_noted) {
      out.stuck.insert(name);
      continue;
    }
    if (r.view.deleting || !find_new) continue;
    const auto due = r.seen_at + deadline;
    if (o.now >= due)
      out.stuck.insert(name);
    else if (!out.next_deadline || due < *out.next_deadline)
      out.next_deadline = due;
  }
  return out;
}

std::optional<std::int64_t> longest_starting(const set_observation& o, const std::string& variant) {
  std::optional<std::int64_t> longest;
  for (const auto& [name, r] : o.runners) {
    if (r.variant != variant || r.seen_at == time_point{} || r.seen_at > o.now || started(r, o.now) ||
        r.stuck_start_noted || r.view.deleting)
      continue;
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(o.now - r.seen_at).count();
    if (!longest || seconds > *longest) longest = seconds;
  }
  return longest;
}

set_event stuck_start_event(const std::string& runner, const std::string& variant,
                            std::chrono::seconds deadline, bool derived) {
  set_event e;
  e.warning = true;  // a node, an image pull or a runner process is slower than it should be
  e.reason = "StuckStartReplaced";
  e.action = "Replace";
  e.note = "Runner " + runner + (variant.empty() ? "" : " (variant " + variant + ")") +
           " did not come online within " + std::to_string(deadline.count()) + " s (" +
           (derived ? "derived from the variant's observed start-up times" : "spec.startupTimeoutSeconds") +
           "): it is removed unless it took a job, and replaced within maxRunners (at once when there is "
           "room, else once it is gone)";
  return e;
}

}  // namespace octorun::runnerset
