// The manager end to end (not in ctest): the real octorun binary in webhook
// mode against a real control plane (kwok runs the pods) and the GitHub
// simulator. See README.md.
//
//   manager_bench [--jobs 100] [--max-runners 20] [--job-ms 0] [--reps 5] [--scale 1000] [--scale-reps 1]
// Uses the cluster in $OCTORUN_TEST_CLUSTER, or starts a private one.
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/manager/harness.hpp"
#include "test/manager/binary_harness.hpp"

namespace {

using namespace octorun;
using namespace octorun::bench;
using test::namespace_watch;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct options {
  int jobs = 100, max_runners = 20, job_ms = 0, reps = 5, scale = 1000, scale_reps = 1;
};

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "manager_bench: %s\n", why.c_str());
  std::exit(1);
}

// One namespace, simulator and manager process; stops them in reverse order.
struct setup {
  const test::cluster_info& c;
  std::string ns;
  std::unique_ptr<sim::simulator> sim;
  std::unique_ptr<test::octorun_process> manager;
  std::string log;

  setup(const test::cluster_info& cl, const std::string& kubeconfig, int max_runners) : c(cl) {
    ns = test::make_namespace(c, "bench");
    sim::simulator_options so;
    auto s = sim::simulator::start(so);
    if (!s) fail("simulator: " + s.error());
    sim = std::move(*s);
    sim->add_organization("acme");
    const std::string secret = "bench-webhook-secret";
    log = "/tmp/octorun-bench-" + ns + ".log";
    manager = std::make_unique<test::octorun_process>(
        OCTORUN_BINARY, test::octorun_args(kubeconfig, ns, "bench"), secret, log);
    auto url = manager->wait_leading(60s);
    if (url.empty()) fail("the manager did not start leading; see " + log);
    sim->set_webhook(url, secret);
    test::kubectl(
        c, "-n " + ns + " create secret generic github --from-literal=github_token=ghp_simulator >/dev/null");
    test::kubectl(
        c,
        "-n " + ns + " create -f - >/dev/null <<'EOF'\n" +
            R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":"linux"},"spec":{)"
            R"("scopeURL":")" +
            sim->ghes_url() + "/acme" +
            R"(","credentialsSecretName":"github","runnerLabels":["linux"],"minRunners":0,"maxRunners":)" +
            std::to_string(max_runners) +
            R"(,"template":{"spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0"}]}}}})"
            "\nEOF");
    // The set is read and its first status written before anything is measured.
    test::kubectl(c,
                  "-n " + ns +
                      " wait runnerset/linux --for=jsonpath='{.status.observedGeneration}'=1 --timeout=60s "
                      ">/dev/null");
  }
  ~setup() {
    manager->stop(SIGTERM);
    test::kubectl(c, "delete namespace " + ns + " --wait=false >/dev/null");
  }
};

std::vector<std::int64_t> queue(sim::simulator& s, int n, int duration_ms) {
  std::vector<std::int64_t> ids;
  for (int i = 0; i < n; ++i) {
    sim::job_spec j;
    j.repository = "acme/app";
    j.labels = {"self-hosted", "linux"};
    j.duration = std::chrono::milliseconds(duration_ms);
    ids.push_back(s.add_job(j));
  }
  return ids;
}

std::int64_t github_calls(const sim::simulator& s) {
  std::int64_t n = 0;
  for (const auto& [k, v] : s.call_counts())
    if (!k.starts_with("webhook.")) n += v;
  return n;
}

struct burst_result {
  double jobs_per_s = 0;
  std::vector<double> queued_to_pod, queued_to_pod_first_wave, completed_to_gone;
  std::map<std::string, std::int64_t> requests;  // the manager's, by flow schema, during the burst
  std::int64_t github = 0, jit = 0;
};

burst_result run_burst(const test::cluster_info& c, const kube::config& watch_cfg,
                       const std::string& kubeconfig, const options& o) {
  setup s(c, kubeconfig, o.max_runners);
  namespace_watch w(watch_cfg, s.ns, *s.sim);
  auto before = manager_requests(c);
  s.sim->reset_counts();

  std::map<std::int64_t, clock_type::time_point> queued_at;
  std::vector<std::int64_t> ids;
  auto start = clock_type::now();
  for (int i = 0; i < o.jobs; ++i) {
    auto id = queue(*s.sim, 1, o.job_ms)[0];
    queued_at[id] = clock_type::now();
    ids.push_back(id);
  }
  // Completion times: the simulator wakes the predicate on every state change
  // (no job can complete within the microseconds the queueing took).
  std::map<std::int64_t, clock_type::time_point> completed;
  s.sim->wait_until(
      [&](const sim::simulator& sim) {
        for (auto id : ids)
          if (!completed.count(id) && sim.job_state(id) == "completed") completed[id] = clock_type::now();
        return completed.size() == ids.size();
      },
      600s);
  if (static_cast<int>(completed.size()) != o.jobs) fail("jobs did not complete; see " + s.log);
  if (!w.wait([](const namespace_watch& x) { return x.runners() == 0 && x.runners_seen() > 0; }, 300s))
    fail("runners were not removed; see " + s.log);
  auto gone = w.runner_deleted();
  auto end = start;
  for (const auto& [name, t] : gone) end = std::max(end, t);
  // Pods go too before the counts are read (their deletion is part of each job).
  if (!w.wait([](const namespace_watch& x) { return x.pods() == 0; }, 300s)) fail("pods were not removed");
  auto after = manager_requests(c);

  burst_result r;
  r.jobs_per_s = o.jobs / std::chrono::duration<double>(end - start).count();
  auto pods = w.pod_created();
  std::vector<std::pair<clock_type::time_point, std::string>> pod_order;
  for (const auto& [runner, t] : pods) pod_order.emplace_back(t, runner);
  std::sort(pod_order.begin(), pod_order.end());
  std::set<std::string> first_wave;
  for (size_t i = 0; i < pod_order.size() && i < static_cast<size_t>(o.max_runners); ++i)
    first_wave.insert(pod_order[i].second);
  for (const auto& [job, runner] : runner_of_jobs(*s.sim)) {
    auto pod = pods.find(runner);
    auto del = gone.find(runner);
    if (pod != pods.end()) {
      r.queued_to_pod.push_back(ms(pod->second - queued_at[job]));
      if (first_wave.count(runner)) r.queued_to_pod_first_wave.push_back(ms(pod->second - queued_at[job]));
    }
    if (del != gone.end() && completed.count(job))
      r.completed_to_gone.push_back(ms(del->second - completed[job]));
  }
  for (const auto& [k, v] : after) r.requests[k] = v - before[k];
  r.github = github_calls(*s.sim);
  r.jit = s.sim->calls("rest.generate_jitconfig");
  return r;
}

struct scale_result {
  memory idle, at_scale;
  double seconds_to_scale = 0, seconds_to_zero = 0;
};

scale_result run_scale(const test::cluster_info& c, const kube::config& watch_cfg,
                       const std::string& kubeconfig, const options& o) {
  setup s(c, kubeconfig, o.scale);
  namespace_watch w(watch_cfg, s.ns, *s.sim);
  scale_result r;
  r.idle = memory_of(s.manager->pid());
  auto start = clock_type::now();
  auto ids = queue(*s.sim, o.scale, -1);  // each runs until completed by hand
  auto all_running = [&](const sim::simulator& sim) {
    return std::all_of(ids.begin(), ids.end(), [&](auto id) { return sim.job_state(id) == "running"; });
  };
  if (!s.sim->wait_until(all_running, 1200s)) fail("the jobs did not all start; see " + s.log);
  r.seconds_to_scale = std::chrono::duration<double>(clock_type::now() - start).count();
  std::printf("  %zu Runners exist, %d jobs running after %.1f s\n", w.runners(), o.scale,
              r.seconds_to_scale);
  // Let it settle (status writes, resyncs) and read the memory.
  std::this_thread::sleep_for(10s);  // a measurement interval, not synchronisation
  r.at_scale = memory_of(s.manager->pid());
  auto stop = clock_type::now();
  for (auto id : ids) s.sim->complete_job(id);
  if (!w.wait([](const namespace_watch& x) { return x.runners() == 0; }, 1200s))
    fail("runners were not removed; see " + s.log);
  r.seconds_to_zero = std::chrono::duration<double>(clock_type::now() - stop).count();
  w.wait([](const namespace_watch& x) { return x.pods() == 0; }, 600s);
  return r;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    int v = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--jobs"))
      o.jobs = v;
    else if (!std::strcmp(argv[i], "--max-runners"))
      o.max_runners = v;
    else if (!std::strcmp(argv[i], "--job-ms"))
      o.job_ms = v;
    else if (!std::strcmp(argv[i], "--reps"))
      o.reps = v;
    else if (!std::strcmp(argv[i], "--scale"))
      o.scale = v;
    else if (!std::strcmp(argv[i], "--scale-reps"))
      o.scale_reps = v;
    else
      fail(std::string("unknown option ") + argv[i]);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  auto o = parse(argc, argv);
  auto bench = prepare_bench_cluster();
  if (!bench) fail(bench.error());
  const auto& c = bench->cluster;
  const auto& kubeconfig = bench->manager_kubeconfig;
  const auto* watch_cfg = &bench->watch;

  std::printf("burst: %d jobs of %d ms, maxRunners %d, %d repetitions\n", o.jobs, o.job_ms, o.max_runners,
              o.reps);
  std::printf("%4s %9s %10s %10s %10s %10s %10s %10s %8s %8s\n", "run", "jobs/s", "q>pod p50", "q>pod p99",
              "wave1 p50", "wave1 p99", "c>gone p50", "c>gone p99", "kw/job", "gh/job");
  std::vector<double> tput, qp50, qp99, wp50, wp99, gp50, gp99, kw, gh;
  std::map<std::string, std::vector<double>> per_key;
  for (int rep = 0; rep < o.reps; ++rep) {
    auto r = run_burst(c, *watch_cfg, kubeconfig, o);
    std::int64_t writes = 0;
    for (const auto& [k, v] : r.requests) {
      per_key[k].push_back(static_cast<double>(v) / o.jobs);
      if (k != "reads") writes += v;
    }
    double kw_job = static_cast<double>(writes) / o.jobs, gh_job = static_cast<double>(r.github) / o.jobs;
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
  }

  for (int rep = 0; rep < o.scale_reps && o.scale > 0; ++rep) {
    std::printf("\nscale: %d jobs held running (maxRunners %d)\n", o.scale, o.scale);
    auto r = run_scale(c, *watch_cfg, kubeconfig, o);
    std::printf(
        "  manager memory: leading and idle VmRSS %lld KiB; at %d Runners VmRSS %lld KiB, VmHWM %lld KiB\n",
        static_cast<long long>(r.idle.rss_kib), o.scale, static_cast<long long>(r.at_scale.rss_kib),
        static_cast<long long>(r.at_scale.hwm_kib));
    std::printf("  0 -> %d running: %.1f s; all completed -> 0 Runners: %.1f s\n", o.scale,
                r.seconds_to_scale, r.seconds_to_zero);
  }
  return 0;
}
