#include "actors/runnerset/demand.hpp"

#include <algorithm>

namespace octorun::runnerset {
namespace {

bool listener(const set_observation& o) {
  return o.set && o.set->spec.intake == model::intake_mode::listener;
}

}  // namespace

std::int64_t counted_jobs(const set_observation& o, const std::string& variant) {
  if (listener(o)) {
    auto it = o.scale_sets.find(variant);
    return it == o.scale_sets.end() ? 0 : it->second.assigned_jobs;
  }
  std::int64_t n = 0;
  for (const auto& [job, v] : o.active_jobs) n += v == variant ? 1 : 0;
  return n;
}

over_but_counted jobs_over_but_counted(const set_observation& o, const std::string& variant) {
  over_but_counted out;
  for (const auto& [job, mark] : o.unheard_completions) {
    const auto until = mark.since + unheard_completion_grace;
    if (o.now >= until) continue;
    if (listener(o)) {
      if (mark.variant != variant) continue;
    } else if (auto active = o.active_jobs.find(job);
               active == o.active_jobs.end() || active->second != variant) {
      continue;
    }
    ++out.jobs;
    out.first_grace_end = std::min(until, out.first_grace_end.value_or(until));
  }
  if (!listener(o) || out.jobs == 0) return out;
  auto entry = o.scale_sets.find(variant);
  std::int64_t running_elsewhere = entry == o.scale_sets.end() ? 0 : entry->second.running_jobs;
  for (const auto& [name, r] : o.runners)
    if (r.variant == variant && r.view.busy() && !r.view.finished() && !r.job_completed) --running_elsewhere;
  out.jobs = std::clamp<std::int64_t>(running_elsewhere, 0, out.jobs);
  return out;
}

}  // namespace octorun::runnerset
