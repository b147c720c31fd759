#include "model/timeline.hpp"

#include <algorithm>

namespace octorun::model {
namespace {

enum class clock_source { github, cluster };

struct phase_points {
  time_point_seconds job_timeline::*from;
  time_point_seconds job_timeline::*to;
  clock_source from_clock;
  clock_source to_clock;
};

phase_points points_of(job_phase p) {
  using t = job_timeline;
  constexpr auto gh = clock_source::github;
  constexpr auto k8s = clock_source::cluster;
  switch (p) {
    case job_phase::runner_created:
      return {&t::queued, &t::created, gh, k8s};
    case job_phase::pod_scheduled:
      return {&t::created, &t::pod_scheduled, k8s, k8s};
    case job_phase::containers_started:
      return {&t::pod_scheduled, &t::containers_started, k8s, k8s};
    case job_phase::runner_online:
      return {&t::containers_started, &t::online, k8s, k8s};
    case job_phase::job_started:
      return {&t::queued, &t::started, gh, gh};
    case job_phase::job_completed:
      return {&t::started, &t::completed, gh, gh};
    case job_phase::runner_gone:
      break;
  }
  return {&t::completed, &t::gone, gh, k8s};
}

// What is wrong with one reached point, if anything.
std::optional<timestamp_problem> point_problem(std::int64_t at, std::int64_t now, const timeline_limits& l) {
  if (at <= 0) return timestamp_problem::missing;
  if (at < now - l.max_age) return timestamp_problem::far_past;
  if (at > now + l.skew_tolerance) return timestamp_problem::future;
  return std::nullopt;
}

// A trusted point, clamped to now (within the skew tolerance); nothing for
// one not reached or not trusted.
std::optional<std::int64_t> trusted(const time_point_seconds& p, std::int64_t now, const timeline_limits& l) {
  if (!p || point_problem(*p, now, l)) return std::nullopt;
  return std::min(*p, now);
}

}  // namespace

std::string_view to_string(job_phase p) {
  switch (p) {
    case job_phase::runner_created:
      return "runner_created";
    case job_phase::pod_scheduled:
      return "pod_scheduled";
    case job_phase::containers_started:
      return "containers_started";
    case job_phase::runner_online:
      return "runner_online";
    case job_phase::job_started:
      return "job_started";
    case job_phase::job_completed:
      return "job_completed";
    case job_phase::runner_gone:
      break;
  }
  return "runner_gone";
}

std::string_view to_string(timestamp_problem p) {
  switch (p) {
    case timestamp_problem::missing:
      return "missing";
    case timestamp_problem::future:
      return "future";
    case timestamp_problem::far_past:
      return "far_past";
    case timestamp_problem::reordered:
      return "reordered";
    case timestamp_problem::skewed:
      break;
  }
  return "skewed";
}

phase_measurement measure(const job_timeline& t, std::initializer_list<job_phase> phases, std::int64_t now,
                          const timeline_limits& limits) {
  phase_measurement out;
  for (const auto phase : phases) {
    const auto points = points_of(phase);
    const auto& from = t.*points.from;
    const auto& to = t.*points.to;
    if (!from || !to) continue;  // not reached
    std::optional<timestamp_problem> problem = point_problem(*from, now, limits);
    if (!problem) problem = point_problem(*to, now, limits);
    if (problem) {
      out.drops.push_back({phase, *problem});
      continue;
    }
    const std::int64_t start = std::min(*from, now);
    const std::int64_t end = std::min(*to, now);
    if (end >= start) {
      out.samples.push_back({phase, end - start});
      continue;
    }
    // A runner that was there before the job was queued waited for it: no phase of the job's.
    if (phase == job_phase::runner_created) continue;
    const bool across_clocks = points.from_clock != points.to_clock;
    if (across_clocks && start - end <= limits.skew_tolerance) {
      out.samples.push_back({phase, 0});
      out.drops.push_back({phase, timestamp_problem::skewed});
    } else {
      out.drops.push_back({phase, timestamp_problem::reordered});
    }
  }
  return out;
}

runner_usage usage_of(const job_timeline& t, std::int64_t end, const timeline_limits& limits) {
  runner_usage out;
  auto begin = trusted(t.pod_scheduled, end, limits);
  if (!begin) begin = trusted(t.created, end, limits);
  if (!begin) return out;
  const std::int64_t life = std::max<std::int64_t>(end - *begin, 0);
  if (const auto started = trusted(t.started, end, limits)) {
    const std::int64_t busy_from = std::clamp(*started, *begin, end);
    const auto completed = trusted(t.completed, end, limits);
    const std::int64_t busy_to = std::clamp(completed.value_or(end), busy_from, end);
    out.busy_seconds = busy_to - busy_from;
  }
  out.idle_seconds = life - out.busy_seconds;
  return out;
}

std::string_view repository_label(std::string_view repository) {
  if (repository.empty()) return "";
  const auto slash = repository.find('/');
  if (slash == std::string_view::npos) return "invalid";
  const auto owner = repository.substr(0, slash);
  const auto name = repository.substr(slash + 1);
  auto word = [](std::string_view s, std::size_t max) {
    return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
             c == '_' || c == '.';
    });
  };
  if (!word(owner, 39) || !word(name, 100)) return "invalid";
  return repository;
}

}  // namespace octorun::model
