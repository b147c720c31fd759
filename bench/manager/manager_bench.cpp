// The manager end to end (not in ctest): the real octorun binary against a
// real control plane (kwok runs the pods) and the GitHub simulator. See
// README.md.
//
//   manager_bench [--jobs 100] [--max-runners 20] [--job-ms 0] [--reps 5] [--scale 1000] [--scale-reps 1]
//                 [--scale-bursts 1] [--intake Webhook|Listener] [--manager-arg --flag=value]...
//                 [--breakdown 1] [--rate-limit 5000] [--binary PATH]
// Uses the cluster in $OCTORUN_TEST_CLUSTER, or starts a private one.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/common/apiserver_metrics.hpp"
#include "bench/manager/burst.hpp"

namespace {

using namespace octorun;
using namespace octorun::bench;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct options {
  int jobs = 100, max_runners = 20, job_ms = 0, reps = 5, scale = 1000, scale_reps = 1;
  int scale_bursts = 1;  // scale bursts one after the other in each scale run's manager
  std::string intake = "Webhook";
  std::vector<std::string> manager_args;
  std::string binary;  // empty: the octorun built with the bench
  bool breakdown = false;
  std::int64_t rate_limit = 5000;
};

burst_options burst_of(const options& o) {
  burst_options b;
  b.jobs = o.jobs;
  b.max_runners = o.max_runners;
  b.job_ms = o.job_ms;
  b.intake = o.intake;
  b.manager_args = o.manager_args;
  b.binary = o.binary;
  b.trace_requests = o.breakdown;
  b.rate_limit = o.rate_limit;
  return b;
}

// One scale burst (README.md, "Scale"), read at each point.
struct scale_result {
  memory before, at_scale, caught_up, at_zero, after_gc, settled;
  double seconds_to_scale = 0, seconds_to_caught_up = 0, seconds_to_zero = 0, seconds_to_after_gc = 0;
};

// `o.scale` jobs held running in the manager of `s`, then all completed,
// until that manager is idle again; `w` watches its namespace.
scale_result scale_burst(const manager_setup& s, const lifecycle_watch& w, const options& o) {
  auto* sim = s.sim.get();
  scale_result r;
  r.before = memory_of(s.manager->pid());
  auto start = clock_type::now();
  auto ids = test::queue_jobs(*sim, o.scale, -1ms);  // each runs until completed by hand
  auto all_running = [&](const sim::simulator& x) {
    return std::all_of(ids.begin(), ids.end(), [&](auto id) { return x.job_state(id) == "running"; });
  };
  if (!sim->wait_until(all_running, 1200s)) fail("the jobs did not all start; see " + s.log);
  r.seconds_to_scale = std::chrono::duration<double>(clock_type::now() - start).count();
  std::printf("  %zu Runners exist, %d jobs running after %.1f s\n", w.counts().total, o.scale,
              r.seconds_to_scale);
  // Let it settle (status writes, resyncs) and read the memory.
  std::this_thread::sleep_for(10s);  // a measurement interval, not synchronisation
  r.at_scale = memory_of(s.manager->pid());
  // The jobs run before the manager has written every phase: its request
  // pool still holds a backlog. Once Kubernetes shows every Runner Running,
  // what is left is the cost of the Runners themselves.
  const auto scale = static_cast<std::size_t>(o.scale);
  if (!w.wait([scale](const lifecycle_watch& x) { return x.counts().busy == scale; }, 1200s))
    fail("the Runners' phases did not all reach Running; see " + s.log);
  r.seconds_to_caught_up = std::chrono::duration<double>(clock_type::now() - start).count();
  std::this_thread::sleep_for(10s);  // a measurement interval, not synchronisation
  r.caught_up = memory_of(s.manager->pid());
  auto stop = clock_type::now();
  for (auto id : ids) sim->complete_job(id);
  if (!w.wait([](const lifecycle_watch& x) { return x.counts().total == 0; }, 1200s))
    fail("runners were not removed; see " + s.log);
  r.seconds_to_zero = std::chrono::duration<double>(clock_type::now() - stop).count();
  // The way down sends as many requests as the way up; its peak counts too.
  r.at_zero = memory_of(s.manager->pid());
  w.wait([](const lifecycle_watch& x) { return x.counts().pods == 0; }, 600s);
  // Minutes later (the garbage collector deletes the pods): what a quiet
  // manager keeps once every request timeout of the burst has expired.
  r.after_gc = memory_of(s.manager->pid());
  r.seconds_to_after_gc = std::chrono::duration<double>(clock_type::now() - stop).count();
  // What the manager, idle, keeps of the burst's memory (it gives freed
  // heap back within a look or two: cmd/octorun/heap_return.hpp).
  std::this_thread::sleep_for(30s);  // a measurement interval, not synchronisation
  r.settled = memory_of(s.manager->pid());
  return r;
}

void print_scale_burst(const scale_result& r, int scale) {
  std::printf("  manager memory: before VmRSS %lld KiB; at %d Runners VmRSS %lld KiB, VmHWM %lld KiB\n",
              static_cast<long long>(r.before.rss_kib), scale, static_cast<long long>(r.at_scale.rss_kib),
              static_cast<long long>(r.at_scale.hwm_kib));
  std::printf("  every Runner Running in Kubernetes after %.1f s; 10 s later VmRSS %lld KiB\n",
              r.seconds_to_caught_up, static_cast<long long>(r.caught_up.rss_kib));
  std::printf("  back at 0 Runners: VmRSS %lld KiB; VmHWM so far %lld KiB\n",
              static_cast<long long>(r.at_zero.rss_kib), static_cast<long long>(r.at_zero.hwm_kib));
  std::printf("  %.0f s after the jobs completed (the pods gone): VmRSS %lld KiB\n", r.seconds_to_after_gc,
              static_cast<long long>(r.after_gc.rss_kib));
  std::printf("  30 s later, idle: VmRSS %lld KiB\n", static_cast<long long>(r.settled.rss_kib));
  std::printf("  0 -> %d running: %.1f s; all completed -> 0 Runners: %.1f s\n", scale, r.seconds_to_scale,
              r.seconds_to_zero);
  std::fflush(stdout);
}

// One manager (leading and idle before the first burst) through
// `o.scale_bursts` scale bursts, one after the other: does a burst reuse
// the memory the one before it left, or take more?
std::vector<scale_result> run_scale(const bench_cluster& b, const options& o) {
  auto bo = burst_of(o);
  bo.trace_requests = false;
  manager_setup s(b.cluster, b.manager_kubeconfig, bo, o.scale);
  auto* sim = s.sim.get();
  lifecycle_watch w(b.watch, s.ns, [sim](const std::string& runner) { sim->runner_online(runner); });
  std::vector<scale_result> bursts;
  for (int i = 0; i < o.scale_bursts; ++i) {
    if (o.scale_bursts > 1) std::printf(" burst %d of %d\n", i + 1, o.scale_bursts);
    bursts.push_back(scale_burst(s, w, o));
    print_scale_burst(bursts.back(), o.scale);
  }
  return bursts;
}

constexpr const char* usage =
    "manager_bench [--jobs 100] [--max-runners 20] [--job-ms 0] [--reps 5] [--scale 1000] [--scale-reps 1]\n"
    "              [--scale-bursts 1] [--intake Webhook|Listener] [--manager-arg --flag=value]...\n"
    "              [--breakdown 1] [--rate-limit 5000] [--binary PATH]\n"
    "See bench/manager/README.md.\n";

options parse(int argc, char** argv) {
  check_flag_pairs(argc, argv, usage);
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    int v = std::atoi(value.c_str());
    if (flag == "--jobs")
      o.jobs = v;
    else if (flag == "--max-runners")
      o.max_runners = v;
    else if (flag == "--job-ms")
      o.job_ms = v;
    else if (flag == "--reps")
      o.reps = v;
    else if (flag == "--scale")
      o.scale = v;
    else if (flag == "--scale-reps")
      o.scale_reps = v;
    else if (flag == "--scale-bursts" && v > 0)
      o.scale_bursts = v;
    else if (flag == "--intake" && (value == "Webhook" || value == "Listener"))
      o.intake = value;
    else if (flag == "--manager-arg")
      o.manager_args.push_back(value);
    else if (flag == "--rate-limit" && std::atoll(value.c_str()) > 0)
      o.rate_limit = std::atoll(value.c_str());
    else if (flag == "--binary")
      o.binary = value;
    else if (flag == "--breakdown")
      o.breakdown = value == "1" || value == "true";
    else
      fail("unknown option or bad value: " + flag + " " + value);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  auto o = parse(argc, argv);
  auto bench = prepare_bench_cluster();
  if (!bench) fail(bench.error());

  std::printf("burst: %d jobs of %d ms, maxRunners %d, %s intake, %d repetitions\n", o.jobs, o.job_ms,
              o.max_runners, o.intake.c_str(), o.reps);
  std::printf("%4s %9s %10s %10s %10s %10s %10s %10s %8s %8s\n", "run", "jobs/s", "q>pod p50", "q>pod p99",
              "wave1 p50", "wave1 p99", "c>gone p50", "c>gone p99", "kw/job", "gh/job");
  std::vector<double> tput, qp50, qp99, wp50, wp99, gp50, gp99, kw, gh;
  std::map<std::string, std::vector<double>> per_key;
  std::vector<burst_result> runs;
  for (int rep = 0; rep < o.reps; ++rep) {
    auto r = run_burst(*bench, burst_of(o));
    for (const auto& [k, v] : r.requests) per_key[k].push_back(static_cast<double>(v) / o.jobs);
    double kw_job = static_cast<double>(writes_in(r.requests)) / o.jobs;
    double gh_job = static_cast<double>(r.github) / o.jobs;
    std::printf("%4d %9.2f %10.0f %10.0f %10.0f %10.0f %10.0f %10.0f %8.2f %8.2f\n", rep + 1, r.jobs_per_s,
                percentile(r.queued_to_pod, 0.5), percentile(r.queued_to_pod, 0.99),
                percentile(r.queued_to_pod_first_wave, 0.5), percentile(r.queued_to_pod_first_wave, 0.99),
                percentile(r.completed_to_gone, 0.5), percentile(r.completed_to_gone, 0.99), kw_job, gh_job);
    std::fflush(stdout);
    tput.push_back(r.jobs_per_s);
    qp50.push_back(percentile(r.queued_to_pod, 0.5));
    qp99.push_back(percentile(r.queued_to_pod, 0.99));
    wp50.push_back(percentile(r.queued_to_pod_first_wave, 0.5));
    wp99.push_back(percentile(r.queued_to_pod_first_wave, 0.99));
    gp50.push_back(percentile(r.completed_to_gone, 0.5));
    gp99.push_back(percentile(r.completed_to_gone, 0.99));
    kw.push_back(kw_job);
    gh.push_back(gh_job);
    per_key["github calls"].push_back(gh_job);
    per_key["github generate-jitconfig"].push_back(static_cast<double>(r.jit) / o.jobs);
    runs.push_back(std::move(r));
  }
  if (o.reps > 0) {
    std::printf("%4s %9.2f %10.0f %10.0f %10.0f %10.0f %10.0f %10.0f %8.2f %8.2f\n", "med", median(tput),
                median(qp50), median(qp99), median(wp50), median(wp99), median(gp50), median(gp99),
                median(kw), median(gh));
    std::printf(
        "(latencies in ms; q>pod: job queued -> pod of the runner that ran it created; wave1: the first\n"
        " maxRunners pods, a free slot; c>gone: job completed -> its Runner deleted; kw: the manager's\n"
        " Kubernetes writes counted by the apiserver; gh: GitHub REST calls)\n\n");
    std::printf("per job, median of the runs (the manager's requests as the apiserver counted them):\n");
    for (const auto& [k, v] : per_key)
      if (median(v) > 0) std::printf("  %-28s %6.2f\n", k.c_str(), median(v));
    if (o.breakdown) print_breakdown(runs);
  }

  for (int rep = 0; rep < o.scale_reps && o.scale > 0; ++rep) {
    std::printf("\nscale: %d jobs held running (maxRunners %d), %d burst(s) in one manager\n", o.scale,
                o.scale, o.scale_bursts);
    auto bursts = run_scale(*bench, o);
    if (bursts.size() < 2) continue;
    std::printf("  VmRSS (KiB) by burst: %5s %10s %14s %10s\n", "burst", "before", "at Runners",
                "idle after");
    for (size_t i = 0; i < bursts.size(); ++i)
      std::printf("                        %5zu %10lld %14lld %10lld\n", i + 1,
                  static_cast<long long>(bursts[i].before.rss_kib),
                  static_cast<long long>(bursts[i].at_scale.rss_kib),
                  static_cast<long long>(bursts[i].settled.rss_kib));
    std::printf("  VmHWM over the whole run: %lld KiB\n",
                static_cast<long long>(bursts.back().settled.hwm_kib));
  }
  return 0;
}
