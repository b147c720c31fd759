#include "bench/loadtest/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/json.hpp"

namespace octorun::loadtest {
namespace {

using bench::percentile;

std::string fixed(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string seconds_text(double s) { return s < 1 ? fixed(s * 1000, 0) + " ms" : fixed(s, 2) + " s"; }

double mib(std::int64_t kib) { return static_cast<double>(kib) / 1024; }

void check(summary& s, const char* name, const std::optional<double>& limit, std::optional<double> value,
           bool at_most, bool is_time) {
  if (!limit) return;
  target_result t;
  t.name = name;
  t.limit = std::string(at_most ? "<= " : ">= ") + (is_time ? seconds_text(*limit) : fixed(*limit));
  if (!value) {
    t.value = "not measured";
    t.met = false;
  } else {
    t.value = is_time ? seconds_text(*value) : fixed(*value);
    t.met = at_most ? *value <= *limit : *value >= *limit;
  }
  s.targets.push_back(std::move(t));
}

}  // namespace

bool summary::passed() const {
  return !timed_out && std::all_of(targets.begin(), targets.end(), [](const auto& t) { return t.met; });
}

summary summarize(const run_record& r, const options& o) {
  summary s;
  s.planned = r.planned;
  s.queued = static_cast<int>(r.jobs.size());
  s.timed_out = r.timed_out;
  s.max_runners = r.max_runners_seen;
  s.max_active_runners = r.max_active_runners;
  s.max_pods = r.max_pods;
  s.max_runners_spec = o.max_runners;
  double end_ms = r.start_ms;
  for (const auto& j : r.jobs) {
    if (j.started_ms > 0) {
      ++s.started;
      s.queue_s.push_back((j.started_ms - j.queued_ms) / 1000);
    }
    if (j.completed_ms > 0) {
      ++s.completed;
      end_ms = std::max(end_ms, j.completed_ms);
    }
    auto runner = r.runners.find(j.runner_name);
    if (j.completed_ms > 0 && !j.runner_name.empty() && runner != r.runners.end() &&
        runner->second.deleted > 0) {
      s.gone_s.push_back((runner->second.deleted - j.completed_ms) / 1000);
      end_ms = std::max(end_ms, runner->second.deleted);
    }
  }
  for (const auto& j : r.jobs) {
    auto pod = r.pods.find(j.runner_name);
    auto runner = r.runners.find(j.runner_name);
    std::optional<pod_marks> seen;
    if (pod != r.pods.end()) seen = pod->second;
    if (runner != r.runners.end()) seen = earliest_sightings(seen.value_or(pod_marks{}), runner->second);
    const pod_marks* marks = seen ? &*seen : nullptr;
    const node_marks* node = nullptr;
    if (marks != nullptr)
      if (auto n = r.nodes.find(marks->node); n != r.nodes.end()) node = &n->second;
    auto online = r.runner_online_ms.find(j.runner_name);
    s.job_phases_s.push_back(
        phases_of(j, marks, node, online == r.runner_online_ms.end() ? 0 : online->second));
  }
  s.phases = phase_statistics(s.job_phases_s);
  s.seconds = (end_ms - r.start_ms) / 1000;
  const double completed_jobs = std::max(1, s.completed);
  if (r.cost) s.idle_runner_s_per_job = r.cost->idle_s / completed_jobs;
  std::vector<busy_span> busy;
  for (const auto& j : r.jobs) {
    auto pod = r.pods.find(j.runner_name);
    if (j.started_ms <= 0 || pod == r.pods.end() || pod->second.node.empty()) continue;
    busy.push_back({pod->second.node, j.started_ms, j.completed_ms > 0 ? j.completed_ms : end_ms});
  }
  s.nodes_seen = r.nodes.size();
  for (const auto& [runner, pod] : r.pods) {
    s.cold_pulls += pod.pull == "cold";
    s.cached_pulls += pod.pull == "cached";
  }
  s.idle_node_s = idle_node_seconds(r.nodes, busy, r.start_ms, end_ms);
  s.idle_node_s_per_job = s.idle_node_s / completed_jobs;
  s.jobs_per_s = s.seconds > 0 ? s.completed / s.seconds : 0;
  s.queue_p50 = percentile(s.queue_s, 0.5);
  s.queue_p95 = percentile(s.queue_s, 0.95);
  s.queue_p99 = percentile(s.queue_s, 0.99);
  s.queue_max = percentile(s.queue_s, 1);
  s.gone_p50 = percentile(s.gone_s, 0.5);
  s.gone_p99 = percentile(s.gone_s, 0.99);
  s.gone_max = percentile(s.gone_s, 1);

  const double jobs = std::max(1, s.queued);
  std::int64_t github = 0, rest = 0, scale_set = 0;
  for (const auto& [k, v] : r.github_calls) {
    if (k.starts_with("webhook.")) continue;  // the simulator's deliveries, not the manager's calls
    github += v;
    if (k.starts_with("rest.")) rest += v;
    if (k.starts_with("scaleset.")) scale_set += v;
  }
  s.github_calls_per_job = static_cast<double>(github) / jobs;
  s.rest_calls_per_job = static_cast<double>(rest) / jobs;
  s.scale_set_calls_per_job = static_cast<double>(scale_set) / jobs;
  auto jit = r.github_calls.find("rest.generate_jitconfig");
  auto scale_set_jit = r.github_calls.find("scaleset.generate_jitconfig");
  s.jit_per_job = static_cast<double>((jit == r.github_calls.end() ? 0 : jit->second) +
                                      (scale_set_jit == r.github_calls.end() ? 0 : scale_set_jit->second)) /
                  jobs;
  if (r.kube_requests) {
    std::int64_t writes = 0, reads = 0;
    for (const auto& [k, v] : *r.kube_requests) (k == "reads" ? reads : writes) += v;
    s.writes_per_job = static_cast<double>(writes) / jobs;
    s.reads_per_job = static_cast<double>(reads) / jobs;
  }

  std::vector<const sample*> rss;
  for (const auto& x : r.samples)
    if (x.rss_kib > 0) rss.push_back(&x);
  if (!rss.empty()) {
    s.rss_start_mib = mib(rss.front()->rss_kib);
    s.rss_end_mib = mib(rss.back()->rss_kib);
    s.rss_warm_mib = mib(rss[rss.size() / 4]->rss_kib);  // after a quarter of the run
    std::int64_t max = 0;
    for (const auto* x : rss) max = std::max(max, x->rss_kib);
    s.rss_max_mib = mib(max);
  }

  if (o.load.shape != profile::kind::burst) {
    const double total = std::chrono::duration<double>(o.load.duration).count();
    const double width = std::max(10.0, std::round(total / 10));
    const auto windows = static_cast<size_t>(std::ceil(total / width));
    std::vector<std::vector<double>> q(windows);
    for (const auto& j : r.jobs) {
      if (j.started_ms <= 0) continue;
      // The simulator stamps whole milliseconds: the first job may read a hair before the start.
      auto at = std::max(0.0, (j.queued_ms - r.start_ms) / 1000);
      q[std::min(windows - 1, static_cast<size_t>(at / width))].push_back((j.started_ms - j.queued_ms) /
                                                                          1000);
    }
    std::vector<std::pair<double, bench::runner_counts>> timeline;
    for (const auto& x : r.samples) timeline.emplace_back(x.t_s, x.runners);
    const auto by_state = runner_seconds_by_window(timeline, width, windows);
    for (size_t i = 0; i < windows; ++i)
      s.windows.push_back({static_cast<double>(i) * width, q[i].size(), percentile(q[i], 0.5),
                           percentile(q[i], 0.99), by_state[i]});
  }

  const auto& w = o.want;
  auto if_any = [](const std::vector<double>& v, double x) {
    return v.empty() ? std::nullopt : std::optional(x);
  };
  check(s, "queue time p50", w.max_queue_p50_s, if_any(s.queue_s, s.queue_p50), true, true);
  check(s, "queue time p99", w.max_queue_p99_s, if_any(s.queue_s, s.queue_p99), true, true);
  check(s, "completed -> gone p99", w.max_gone_p99_s, if_any(s.gone_s, s.gone_p99), true, true);
  check(s, "jobs/s", w.min_jobs_per_s, s.jobs_per_s, false, false);
  check(s, "Kubernetes writes per job", w.max_writes_per_job, s.writes_per_job, true, false);
  check(s, "GitHub calls per job", w.max_github_calls_per_job, s.github_calls_per_job, true, false);
  check(s, "manager RSS (MiB)", w.max_rss_mib, s.rss_max_mib, true, false);
  return s;
}

std::string summary_text(const run_record& r, const options& o, const summary& s) {
  std::ostringstream out;
  auto pct = [](double p50, double p99, double max) {
    return "p50 " + seconds_text(p50) + ", p99 " + seconds_text(p99) + ", max " + seconds_text(max);
  };
  auto queue_pct = [&] {  // p95: what a start-time target names
    return "p50 " + seconds_text(s.queue_p50) + ", p95 " + seconds_text(s.queue_p95) + ", p99 " +
           seconds_text(s.queue_p99) + ", max " + seconds_text(s.queue_max);
  };
  const std::string over = seconds_text(o.load.duration.count() / 1000.0);
  std::string shape;
  switch (o.load.shape) {
    case profile::kind::burst:
      shape = "burst of " + std::to_string(o.load.jobs) + " jobs";
      break;
    case profile::kind::steady:
      shape = "steady " + fixed(o.load.rate) + " jobs/s for " + over;
      break;
    case profile::kind::poisson:
      shape = "Poisson " + fixed(o.load.rate) + " jobs/s for " + over;
      break;
    case profile::kind::ramp:
      shape = "ramp " + fixed(o.load.rate_from) + " -> " + fixed(o.load.rate_to) + " jobs/s over " + over;
      break;
    case profile::kind::workday:
      shape = "workday of " + std::to_string(o.load.jobs) + " jobs over " + over;
      break;
    case profile::kind::workday_poisson:
      shape = "workday of " + std::to_string(o.load.jobs) + " jobs on average (Poisson) over " + over;
      break;
    case profile::kind::bursts:
      shape = "bursts of " + std::to_string(o.load.jobs) + " jobs every " +
              seconds_text(o.load.every.count() / 1000.0) + " for " + over;
      break;
  }
  out << "octorun-loadtest " << r.run_id << ", " << r.started_utc << "\n"
      << "cluster      " << r.cluster << ", namespace " << r.ns << ", RunnerSet " << r.runnerset << " ("
      << o.intake << " intake, minRunners " << o.min_runners << ", maxRunners " << o.max_runners
      << (o.start_time_target_s > 0 ? ", startTimeTarget p95 " + std::to_string(o.start_time_target_s) + " s"
                                    : std::string())
      << ")\n"
      << "GitHub       simulator at " << r.scope_url << "\n"
      << "load         " << shape << ", durations " << o.durations.text << ", seed " << o.seed << "\n"
      << "runner pods  requests " << o.runner_cpu << " CPU, " << o.runner_memory << "; runner start "
      << (o.runner_start.text.empty() ? "fixed:0s" : o.runner_start.text) << "\n"
      << "jobs         " << s.planned << " planned, " << s.queued << " queued, " << s.started << " started, "
      << s.completed << " completed" << (s.timed_out ? " (TIMED OUT)" : "") << "\n"
      << "throughput   " << fixed(s.jobs_per_s) << " jobs/s (" << s.completed
      << " jobs, first queued -> last Runner gone " << seconds_text(s.seconds) << ")\n"
      << "queued -> running      " << queue_pct() << "\n"
      << "completed -> gone      " << pct(s.gone_p50, s.gone_p99, s.gone_max) << "\n"
      << "where the time went    queued -> started, per job (README.md, \"The report\"):\n";
  for (std::size_t p = 0; p < phase_count; ++p) {
    const auto& x = s.phases[p];
    const auto name = std::string(phase_name(static_cast<phase>(p)));
    out << "  " << name << std::string(20 - std::min<std::size_t>(20, name.size()), ' ');
    if (x.measured == 0)
      out << "not measured";
    else
      out << "p50 " << seconds_text(x.p50) << ", p95 " << seconds_text(x.p95) << ", p99 "
          << seconds_text(x.p99);
    if (x.unmeasured > 0)
      out << " (" << x.unmeasured << " of " << (x.measured + x.unmeasured) << " jobs not measured)";
    out << "\n";
  }
  out << "runners      at most " << s.max_active_runners
      << " at once as the manager counts them (not ended, not being deleted; maxRunners "
      << s.max_runners_spec << ")"
      << (s.max_active_runners > static_cast<std::size_t>(s.max_runners_spec) ? "  EXCEEDED" : "") << "; "
      << s.max_runners << " with them; " << s.max_pods << " pods\n"
      << "GitHub       " << fixed(s.github_calls_per_job) << " calls per job: " << fixed(s.rest_calls_per_job)
      << " REST calls, " << fixed(s.scale_set_calls_per_job) << " scale-set protocol calls ("
      << fixed(s.jit_per_job) << " JIT configurations)\n";
  if (s.writes_per_job)
    out << "Kubernetes   " << fixed(*s.writes_per_job) << " writes and " << fixed(*s.reads_per_job)
        << " reads per job by the manager (counted by the apiserver)\n";
  else
    out << "Kubernetes   writes per job not measured (--manager-user)\n";
  if (r.cost) {
    const double total = r.cost->busy_s + r.cost->idle_s;
    out << "cost         " << fixed(r.cost->busy_s, 0) << " runner-s busy, " << fixed(r.cost->idle_s, 0)
        << " idle (" << fixed(total > 0 ? 100 * r.cost->idle_s / total : 0, 0) << "% idle); requested "
        << fixed(r.cost->core_s, 1) << " core-s, " << fixed(r.cost->byte_s / (1024.0 * 1024 * 1024), 1)
        << " GiB-s (the manager's octorun_runner_* counters)\n";
  }
  out << "idle cost    "
      << (s.idle_runner_s_per_job ? fixed(*s.idle_runner_s_per_job, 1) + " runner-s"
                                  : "runner-s not measured (--manager-metrics)")
      << " and " << fixed(s.idle_node_s_per_job, 1) << " node-s idle per completed job ("
      << fixed(s.idle_node_s, 0) << " node-s with no busy runner on " << s.nodes_seen
      << " node(s) watched)\n";
  if (s.cold_pulls + s.cached_pulls > 0)
    out << "image pulls  " << s.cold_pulls << " cold, " << s.cached_pulls << " cached (per-node image cache "
        << (o.per_node_image_cache ? "on" : "off") << ")\n";
  if (s.rss_max_mib)
    out << "manager RSS  " << fixed(*s.rss_start_mib, 1) << " MiB at the start, " << fixed(*s.rss_warm_mib, 1)
        << " MiB after a quarter of the run, " << fixed(*s.rss_end_mib, 1) << " MiB at the end, max "
        << fixed(*s.rss_max_mib, 1) << " MiB\n";
  if (!s.windows.empty()) {
    out << "queue time by window (queued in [from, from + width)), and runner-s starting / idle / busy / "
           "ending in it (the last window holds the drain):\n";
    for (const auto& w : s.windows)
      out << "  from " << std::string(7 - std::min<size_t>(7, fixed(w.from_s, 0).size()), ' ')
          << fixed(w.from_s, 0) << " s  " << w.jobs << " jobs  p50 " << seconds_text(w.p50) << "  p99 "
          << seconds_text(w.p99) << "  runner-s " << fixed(w.runners.starting, 0) << " / "
          << fixed(w.runners.idle, 0) << " / " << fixed(w.runners.busy, 0) << " / "
          << fixed(w.runners.ending, 0) << "\n";
  }
  if (r.kube_requests) {
    out << "the manager's requests per job:";
    int n = 0;
    for (const auto& [k, v] : *r.kube_requests)
      if (v > 0)
        out << (n++ % 3 == 0 ? "\n  " : "   ") << k << " "
            << fixed(static_cast<double>(v) / std::max(1, s.queued));
    out << "\n";
  }
  for (const auto& t : s.targets)
    out << "target       " << t.name << " " << t.limit << ": " << t.value << (t.met ? "  met" : "  MISSED")
        << "\n";
  auto missed = std::count_if(s.targets.begin(), s.targets.end(), [](const auto& t) { return !t.met; });
  out << "result       "
      << (s.timed_out         ? "FAILED: the jobs did not complete within --timeout"
          : missed > 0        ? "FAILED: " + std::to_string(missed) + " target(s) missed"
          : s.targets.empty() ? "done (no targets given)"
                              : "PASSED: every target met")
      << "\n";
  return out.str();
}

std::string summary_json(const run_record& r, const options& o, const summary& s) {
  std::ostringstream out;
  auto opt = [](const std::optional<double>& v) { return v ? fixed(*v, 3) : std::string("null"); };
  out << "{\"run\":" << json::quote(r.run_id) << ",\"started\":" << json::quote(r.started_utc)
      << ",\"cluster\":" << json::quote(r.cluster) << ",\"namespace\":" << json::quote(r.ns)
      << ",\"runnerSet\":" << json::quote(r.runnerset) << ",\"intake\":" << json::quote(o.intake)
      << ",\"minRunners\":" << o.min_runners << ",\"maxRunners\":" << o.max_runners
      << ",\"startTimeTargetP95Seconds\":"
      << (o.start_time_target_s > 0 ? std::to_string(o.start_time_target_s) : "null")
      << ",\"jobs\":{\"planned\":" << s.planned << ",\"queued\":" << s.queued << ",\"started\":" << s.started
      << ",\"completed\":" << s.completed << "},\"timedOut\":" << (s.timed_out ? "true" : "false")
      << ",\"seconds\":" << fixed(s.seconds, 3) << ",\"jobsPerSecond\":" << fixed(s.jobs_per_s, 3)
      << ",\"queueSeconds\":{\"p50\":" << fixed(s.queue_p50, 3) << ",\"p95\":" << fixed(s.queue_p95, 3)
      << ",\"p99\":" << fixed(s.queue_p99, 3) << ",\"max\":" << fixed(s.queue_max, 3)
      << "},\"goneSeconds\":{\"p50\":" << fixed(s.gone_p50, 3) << ",\"p99\":" << fixed(s.gone_p99, 3)
      << ",\"max\":" << fixed(s.gone_max, 3) << "},\"phaseSeconds\":{";
  for (std::size_t p = 0; p < phase_count; ++p) {
    const auto& x = s.phases[p];
    out << (p ? "," : "") << json::quote(std::string(phase_name(static_cast<phase>(p))))
        << ":{\"measured\":" << x.measured << ",\"unmeasured\":" << x.unmeasured;
    if (x.measured > 0)
      out << ",\"p50\":" << fixed(x.p50, 3) << ",\"p95\":" << fixed(x.p95, 3)
          << ",\"p99\":" << fixed(x.p99, 3);
    out << "}";
  }
  out << "},\"idleRunnerSecondsPerJob\":" << opt(s.idle_runner_s_per_job)
      << ",\"idleNodeSecondsPerJob\":" << fixed(s.idle_node_s_per_job, 3)
      << ",\"idleNodeSeconds\":" << fixed(s.idle_node_s, 3) << ",\"nodesWatched\":" << s.nodes_seen
      << ",\"runnerSecondsByWindow\":[";
  for (std::size_t i = 0; i < s.windows.size(); ++i) {
    const auto& w = s.windows[i];
    out << (i ? "," : "") << "{\"fromSeconds\":" << fixed(w.from_s, 0)
        << ",\"starting\":" << fixed(w.runners.starting, 1) << ",\"idle\":" << fixed(w.runners.idle, 1)
        << ",\"busy\":" << fixed(w.runners.busy, 1) << ",\"ending\":" << fixed(w.runners.ending, 1) << "}";
  }
  out << "]"
      << ",\"imagePulls\":{\"cold\":" << s.cold_pulls << ",\"cached\":" << s.cached_pulls << "}"
      << ",\"maxRunnersSeen\":" << s.max_active_runners << ",\"maxRunnersWithDeleting\":" << s.max_runners
      << ",\"maxPods\":" << s.max_pods << ",\"githubCallsPerJob\":" << fixed(s.github_calls_per_job, 3)
      << ",\"restCallsPerJob\":" << fixed(s.rest_calls_per_job, 3)
      << ",\"scaleSetCallsPerJob\":" << fixed(s.scale_set_calls_per_job, 3)
      << ",\"writesPerJob\":" << opt(s.writes_per_job) << ",\"readsPerJob\":" << opt(s.reads_per_job)
      << ",\"rssMiB\":{\"start\":" << opt(s.rss_start_mib) << ",\"warm\":" << opt(s.rss_warm_mib)
      << ",\"max\":" << opt(s.rss_max_mib) << ",\"end\":" << opt(s.rss_end_mib) << "},\"targets\":[";
  for (size_t i = 0; i < s.targets.size(); ++i)
    out << (i ? "," : "") << "{\"name\":" << json::quote(s.targets[i].name)
        << ",\"limit\":" << json::quote(s.targets[i].limit)
        << ",\"value\":" << json::quote(s.targets[i].value)
        << ",\"met\":" << (s.targets[i].met ? "true" : "false") << "}";
  out << "],\"passed\":" << (s.passed() ? "true" : "false") << "}\n";
  return out.str();
}

namespace {

void write_cdf(const std::string& path, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::ofstream out(path);
  out << "# seconds\tfraction of jobs\n";
  for (size_t i = 0; i < v.size(); ++i) out << v[i] << "\t" << static_cast<double>(i + 1) / v.size() << "\n";
}

std::string gnuplot_script(const run_record& r, const options& o, bool rss, bool queue, bool gone) {
  std::ostringstream g;
  g << "set terminal pngcairo size 1000,520 font ',10'\n"
    << "set grid\nset key outside right top\nset xlabel 'seconds since the first job was queued'\n"
    << "set datafile separator '\\t'\n"
    << "set output 'runners.png'\nset title 'Runners by state (" << r.runnerset << ", maxRunners "
    << o.max_runners << ")'\nset ylabel 'Runners'\nset yrange [0:*]\n"
    << "plot 'timeline.tsv' u 1:($3+$4+$5+$6+$7) w filledcurves x1 lc rgb '#bbbbbb' t 'deleting', \\\n"
    << "     '' u 1:($3+$4+$5+$6) w filledcurves x1 lc rgb '#9ecae1' t 'finished', \\\n"
    << "     '' u 1:($3+$4+$5) w filledcurves x1 lc rgb '#31a354' t 'busy (job)', \\\n"
    << "     '' u 1:($3+$4) w filledcurves x1 lc rgb '#fdae6b' t 'idle', \\\n"
    << "     '' u 1:3 w filledcurves x1 lc rgb '#e6550d' t 'starting', \\\n"
    << "     " << o.max_runners << " w l dt 2 lw 2 lc rgb 'black' t 'maxRunners'\n"
    << "set output 'jobs.png'\nset title 'Jobs'\nset ylabel 'jobs'\nset y2label 'completed'\nset y2tics\n"
    << "plot 'timeline.tsv' u 1:9 w steps lw 2 t 'queued, waiting', '' u 1:10 w steps lw 2 t 'running', "
    << "'' u 1:11 w steps lw 2 axes x1y2 t 'completed (right)'\n"
    << "unset y2label\nunset y2tics\n"
    << "set output 'latency.png'\nset xlabel 'seconds'\n"
    << "set ylabel 'fraction of jobs'\nset yrange [0:1]\nset xrange [0:*]\n";
  // One panel per latency, each on its own axis: completed -> gone takes
  // tens of milliseconds where queued -> running takes seconds, and on one
  // axis it would be a line against zero.
  std::vector<std::pair<std::string, std::string>> panels;
  if (queue) panels.emplace_back("queue.cdf", "queued -> running");
  if (gone) panels.emplace_back("gone.cdf", "completed -> Runner gone");
  if (!panels.empty()) {
    g << "set multiplot layout " << panels.size() << ",1 title 'Latency distributions'\n";
    for (const auto& [file, title] : panels)
      g << "set title '" << title << "'\nplot '" << file << "' u 1:2 w steps lw 2 notitle\n";
    g << "unset multiplot\n";
  }
  g << "set autoscale x\n";
  if (rss)
    g << "set output 'rss.png'\nset title 'Manager RSS'\nset xlabel 'seconds since the first job was "
         "queued'\n"
      << "set ylabel 'MiB'\nset yrange [0:*]\nplot 'timeline.tsv' u 1:12 w l lw 2 t 'VmRSS'\n";
  return g.str();
}

}  // namespace

std::vector<std::string> write_report(const std::string& dir, const run_record& r, const options& o,
                                      const summary& s) {
  std::vector<std::string> problems;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return {dir + ": " + ec.message()};
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream out(dir + "/" + name);
    out << text;
    if (!out) problems.push_back(dir + "/" + name + ": not written");
  };
  write("summary.txt", summary_text(r, o, s));
  write("summary.json", summary_json(r, o, s));

  std::ostringstream jobs;
  jobs << "# job\trunner\tqueued_s\tstarted_s\tcompleted_s\trunner_gone_s\tqueue_s\tgone_s\tnode";
  for (std::size_t p = 0; p < phase_count; ++p) jobs << "\t" << phase_name(static_cast<phase>(p)) << "_s";
  jobs << "\n";
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    const auto& j = r.jobs[i];
    auto at = [&](double ms) { return ms > 0 ? fixed((ms - r.start_ms) / 1000, 3) : std::string("-"); };
    auto runner = r.runners.find(j.runner_name);
    double gone = runner == r.runners.end() ? 0 : runner->second.deleted;
    jobs << j.id << "\t" << (j.runner_name.empty() ? "-" : j.runner_name) << "\t" << at(j.queued_ms) << "\t"
         << at(j.started_ms) << "\t" << at(j.completed_ms) << "\t" << at(gone) << "\t"
         << (j.started_ms > 0 ? fixed((j.started_ms - j.queued_ms) / 1000, 3) : "-") << "\t"
         << (gone > 0 && j.completed_ms > 0 ? fixed((gone - j.completed_ms) / 1000, 3) : "-");
    auto pod = r.pods.find(j.runner_name);
    jobs << "\t" << (pod == r.pods.end() || pod->second.node.empty() ? "-" : pod->second.node);
    // "-": not measured (never 0, which is a measured nothing).
    for (const auto& v : s.job_phases_s[i]) jobs << "\t" << (v ? fixed(*v, 3) : "-");
    jobs << "\n";
  }
  write("jobs.tsv", jobs.str());

  std::ostringstream timeline;
  timeline
      << "# "
         "t_s\trunners\tstarting\tidle\tbusy\tfinished\tdeleting\tpods\twaiting\trunning\tcompleted\trss_"
         "mib\n";
  bool any_rss = false;
  for (const auto& x : r.samples) {
    const double at = r.start_ms + x.t_s * 1000;
    int waiting = 0, running = 0, completed = 0;
    for (const auto& j : r.jobs) {
      if (j.completed_ms > 0 && j.completed_ms <= at)
        ++completed;
      else if (j.started_ms > 0 && j.started_ms <= at)
        ++running;
      else if (j.queued_ms > 0 && j.queued_ms <= at)
        ++waiting;
    }
    any_rss = any_rss || x.rss_kib > 0;
    const auto& c = x.runners;
    timeline << fixed(x.t_s, 1) << "\t" << c.total << "\t" << c.starting << "\t" << c.idle << "\t" << c.busy
             << "\t" << c.finished << "\t" << c.deleting << "\t" << c.pods << "\t" << waiting << "\t"
             << running << "\t" << completed << "\t" << fixed(mib(x.rss_kib), 1) << "\n";
  }
  write("timeline.tsv", timeline.str());
  write_cdf(dir + "/queue.cdf", s.queue_s);
  write_cdf(dir + "/gone.cdf", s.gone_s);
  write("plots.gp", gnuplot_script(r, o, any_rss, !s.queue_s.empty(), !s.gone_s.empty()));
  if (o.plots) {
    if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
      problems.push_back("gnuplot not found: no plots (install the Debian package gnuplot-nox)");
    } else {
      auto cmd = "cd '" + dir + "' && gnuplot plots.gp >gnuplot.log 2>&1";
      if (std::system(cmd.c_str()) != 0) problems.push_back("gnuplot failed: see " + dir + "/gnuplot.log");
    }
  }
  return problems;
}

}  // namespace octorun::loadtest
