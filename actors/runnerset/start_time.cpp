#include "actors/runnerset/start_time.hpp"

#include <algorithm>
#include <deque>

#include "actors/runnerset/routing.hpp"
#include "actors/runnerset/stuck_start.hpp"
#include "model/timeline.hpp"

namespace octorun::runnerset {

std::string start_time_wake(const std::string& variant) { return "start-time " + variant; }

std::optional<std::string> variant_of_job(const set_observation& o, const messages::job_info& job) {
  if (!o.set) return std::nullopt;
  if (job.scale_set_id != 0)
    for (const auto& [variant, entry] : o.scale_sets)
      if (entry.id == job.scale_set_id) return variant;
  auto variants = model::effective_variants(o.set->spec);
  if (auto v = variant_for_job(variants, job.labels)) return variants[*v].name;
  return std::nullopt;
}

void note_job_arrival(set_observation& w, const messages::job_info& job, time_point now) {
  if (auto variant = variant_of_job(w, job))
    w.job_arrivals[*variant].add_arrival(job.job_id, now, w.start_time_rule);
}

void note_job_start_time(set_observation& w, const std::string& variant, const messages::job_info& job,
                         time_point now, std::int64_t wall_now) {
  // The message came: both points are reached (0: it did not say when).
  model::job_timeline t;
  t.queued = job.queued_at;
  t.started = job.started_at;
  for (const auto& sample : model::measure(t, {model::job_phase::job_started}, wall_now).samples)
    w.job_arrivals[variant].add_job_start(job.job_id, sample.seconds, now, w.start_time_rule);
}

void forget_old_jobs(set_observation& w) {
  for (auto it = w.job_arrivals.begin(); it != w.job_arrivals.end();) {
    it->second.forget_before(w.now - w.start_time_rule.window);
    it = it->second.empty() ? w.job_arrivals.erase(it) : std::next(it);
  }
}

std::optional<model::start_time_sizing> start_time_of(const set_observation& o,
                                                      const model::effective_variant& v, const demand& d) {
  if (!v.start_time_target_seconds) return std::nullopt;
  model::start_time_facts f;
  f.target_p95_seconds = *v.start_time_target_seconds;
  f.now = o.now;
  f.observing_since = o.observing_since;
  if (auto jobs = o.job_arrivals.find(v.name); jobs != o.job_arrivals.end()) f.observed = &jobs->second;
  // Start-ups to the runner online (observation.hpp, online_startups): the
  // newest say what a runner made now takes (a morning's node start-ups
  // would otherwise size the pool long after nodes and images are there):
  // those of the short window when there are enough to judge from (as many
  // as a derived deadline needs), else the window's, else all kept. With
  // none of the window's, a runner starting now bounds the start-up from
  // below (yesterday's quick starts say little of this morning's nodes).
  // While the newest runner pod found room on a node (warm nodes, or room
  // left on the nodes there are), a runner made now waits for no node: the
  // pool is sized over the start-ups less their waits for a node, which
  // say how the cluster was before it had room. Their p95 stays the whole
  // start-up, which the status shows and warm nodes are judged by.
  const startup_rule enough;
  const auto startups = o.online_startups.find(v.name);
  bool recent = false;
  if (startups != o.online_startups.end()) {
    const auto newest_wait = o.newest_scheduling_wait.find(v.name);
    const bool room = newest_wait != o.newest_scheduling_wait.end() &&
                      newest_wait->second <= o.node_startup_rule.min_wait_seconds;
    auto since = o.now - o.start_time_rule.window;
    for (auto window : {o.start_time_rule.short_window, o.start_time_rule.window}) {
      since = o.now - window;
      recent = startups->second.since(since).size() >= enough.min_samples;
      if (recent) break;
    }
    if (!recent) since = time_point::min();
    f.startup_p95 = model::p95(startups->second.since(since));
    const auto used = startups->second.since(since, room);
    f.startups.assign(used.begin(), used.end());
  }
  if (!recent) f.starting_for = longest_starting(o, v.name);
  f.min_runners = d.min_runners;
  f.max_runners = d.max_runners;
  f.assigned_jobs = d.assigned_jobs;
  return model::size_warm_runners(f, o.start_time_rule);
}

std::optional<model::condition> start_time_condition(const variant_counts* per_variant,
                                                     const model::start_time_rule& rule) {
  if (per_variant == nullptr) return std::nullopt;
  const std::pair<std::string, counts>* worst = nullptr;
  int failing = 0;
  for (const auto& entry : *per_variant) {
    const auto& s = entry.second.start_time;
    if (!s) continue;
    failing += model::status_of(s->verdict) == "True" ? 0 : 1;
    if (worst == nullptr || model::severity(s->verdict) > model::severity(worst->second.start_time->verdict))
      worst = &entry;
  }
  if (worst == nullptr) return std::nullopt;
  const auto& s = *worst->second.start_time;
  model::condition c;
  c.type = "StartTimeTargetMet";
  c.status = std::string(model::status_of(s.verdict));
  c.reason = std::string(model::reason_of(s.verdict));
  c.message = (worst->first.empty() ? "" : "Variant " + worst->first + ": ") + model::describe(s, rule);
  const auto others = failing - (c.status == "True" ? 0 : 1);
  if (others > 0)
    c.message += " " + std::to_string(others) +
                 (others == 1 ? " more variant misses" : " more variants miss") +
                 " its target or cannot be judged yet (status.variants[].startTime).";
  return c;
}

}  // namespace octorun::runnerset
