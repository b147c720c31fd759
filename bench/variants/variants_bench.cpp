// One RunnerSet with N variants against N RunnerSets (not in ctest): the real
// octorun binary with `spec.intake: Listener` against a real control plane
// (kwok runs the pods) and the GitHub simulator. See README.md.
//
//   variants_bench [--variants 20] [--jobs-per 5] [--max-runners 10] [--reps 3] [--settle-s 10]
//                  [--long-poll-s 50] [--jit-latency-ms 0] [--shape both|A|B] [--octorun PATH]
// Uses the cluster in $OCTORUN_TEST_CLUSTER, or starts a private one.
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "adapters/kube/lease.hpp"
#include "bench/common/reflector_thread.hpp"
#include "bench/manager/harness.hpp"
#include "test/binary/binary_harness.hpp"

namespace {

using namespace octorun;
using namespace octorun::bench;
using test::namespace_watch;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct options {
  int variants = 20, jobs_per = 5, max_runners = 10, reps = 3, settle_s = 10, long_poll_s = 50;
  int jit_latency_ms = 0;  // added by the simulator to each scale-set JIT call during the burst
  std::string shape = "both";
  std::string octorun = OCTORUN_BINARY;
};

double secs(clock_type::duration d) { return std::chrono::duration<double>(d).count(); }

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "variants_bench: %s\n", why.c_str());
  std::exit(1);
}

// VmRSS, VmHWM and Threads from /proc/<pid>/status.
struct proc_status {
  double rss_mib = 0, hwm_mib = 0;
  int threads = 0;
};
proc_status status_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  proc_status s;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("VmRSS:")) s.rss_mib = static_cast<double>(std::stoll(line.substr(6))) / 1024;
    if (line.starts_with("VmHWM:")) s.hwm_mib = static_cast<double>(std::stoll(line.substr(6))) / 1024;
    if (line.starts_with("Threads:")) s.threads = std::stoi(line.substr(8));
  }
  return s;
}

std::string label(int i) { return std::string(i < 10 ? "v0" : "v") + std::to_string(i); }

std::string template_json(const std::string& image) {
  return R"({"spec":{"containers":[{"name":"runner","image":")" + image + R"("}]}})";
}

// Shape A: one RunnerSet "ci" (labels [linux]) with variants v00.. (labels
// [vNN], their own template). Shape B: RunnerSets v00.. (labels [linux, vNN]).
// Either way a job labelled [self-hosted, linux, vNN] belongs to exactly one
// scale set, and every scale set may run `max_runners` runners.
std::string runnersets_json(bool variants, const std::string& scope, const options& o) {
  auto set = [&](const std::string& name, const std::string& labels, const std::string& extra,
                 const std::string& image) {
    return R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" + name +
           R"("},"spec":{"scopeURL":")" + scope +
           R"(","credentialsSecretName":"github","intake":"Listener","runnerLabels":)" + labels +
           R"(,"minRunners":0,"maxRunners":)" + std::to_string(o.max_runners) + extra + R"(,"template":)" +
           template_json(image) + "}}";
  };
  if (variants) {
    std::string list;
    for (int i = 0; i < o.variants; ++i)
      list += std::string(i ? "," : "") + R"({"name":")" + label(i) + R"(","runnerLabels":[")" + label(i) +
              R"("],"template":)" + template_json("runner-" + label(i)) + "}";
    return set("ci", R"(["linux"])", R"(,"variants":[)" + list + "]", "runner-default");
  }
  std::string items;
  for (int i = 0; i < o.variants; ++i)
    items += std::string(i ? "," : "") +
             set(label(i), R"(["linux",")" + label(i) + R"("])", "", "runner-" + label(i));
  return R"({"apiVersion":"v1","kind":"List","items":[)" + items + "]}";
}

std::int64_t sum_calls(const std::map<std::string, std::int64_t>& m) {
  std::int64_t n = 0;
  for (const auto& [k, v] : m)
    if (!k.starts_with("webhook.")) n += v;
  return n;
}

std::int64_t kube_writes(const std::map<std::string, std::int64_t>& after,
                         std::map<std::string, std::int64_t> before) {
  std::int64_t n = 0;
  for (const auto& [k, v] : after)
    if (k != "reads") n += v - before[k];
  return n;
}

int open_sessions(const sim::simulator& s) {
  int n = 0;
  for (const auto& ss : s.scale_sets()) n += ss.session_id.empty() ? 0 : 1;
  return n;
}

// The manager's Lease (octorun-manager in its namespace) through a watch:
// when it stopped naming `holder` (the manager releases it on stop: the
// holder goes empty), as the apiserver tells it, not as the manager logs it.
class lease_watch {
 public:
  lease_watch(const kube::config& cfg, const std::string& ns, std::string holder)
      : holder_(std::move(holder)) {
    kube::reflector_callbacks cb;
    cb.replaced = [this](kube::object_list l) {
      for (const auto& item : l.items) seen(item);
    };
    cb.event = [this](kube::watch_event ev) {
      if (ev.type != kube::event_type::error && ev.type != kube::event_type::deleted) seen(ev.obj);
    };
    thread_ = start_reflector(cfg, kube::leases(), ns, "", std::move(cb), stop_);
  }
  ~lease_watch() {
    stop_ = true;
    thread_.join();
  }
  lease_watch(const lease_watch&) = delete;
  lease_watch& operator=(const lease_watch&) = delete;

  // Once `holder` held the Lease: when a version of it first named another
  // holder (or none), within `within`; nullopt if none did.
  std::optional<clock_type::time_point> wait_released(std::chrono::milliseconds within) {
    std::unique_lock l(mu_);
    changed_.wait_for(l, within, [&] { return released_.has_value(); });
    return released_;
  }

 private:
  void seen(const kube::object& o) {
    if (o.name != "octorun-manager") return;
    auto lease = kube::parse_lease(o);
    if (!lease) return;
    const auto now = clock_type::now();
    {
      std::lock_guard l(mu_);
      if (lease->holder == holder_)
        held_ = true;
      else if (held_ && !released_)
        released_ = now;
    }
    changed_.notify_all();
  }

  std::string holder_;
  std::mutex mu_;
  std::condition_variable changed_;
  bool held_ = false;
  std::optional<clock_type::time_point> released_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct run_result {
  proc_status leading, idle, burst, after;
  double setup_s = 0;  // RunnerSet(s) created -> every session open
  int scale_sets = 0, sessions = 0, runnersets_ready = 0;
  std::map<std::string, std::int64_t> setup_calls;  // GitHub, by endpoint, until every session was open
  std::int64_t idle_calls = 0;                      // GitHub calls during the idle settle
  std::int64_t kube_setup = 0, kube_burst = 0;      // the manager's Kubernetes writes
  std::vector<double> q_running, q_pod;             // ms per job
  double burst_s = 0;                               // first queued -> all running
  double burst_calls_per_job = 0;
  double stop_s = 0, lease_released_s = -1, sessions_closed_s = -1;  // after SIGTERM
  int sessions_after_stop = 0;
  int extra_runners = 0;  // Runners created beyond one per job
};

run_result run(bool variants, const test::cluster_info& c, const kube::config& watch_cfg,
               const std::string& kubeconfig, const options& o) {
  run_result r;
  const int n = o.variants;
  auto ns = test::make_namespace(c, variants ? "bench-va" : "bench-vb");
  sim::simulator_options so;
  so.http.threads = 64;  // n long polls are held at any time
  so.long_poll = std::chrono::seconds(o.long_poll_s);
  auto started = sim::simulator::start(so);
  if (!started) fail("simulator: " + started.error());
  auto sim = std::move(*started);
  sim->add_organization("acme");
  auto log = "/tmp/octorun-bench-" + ns + ".log";
  // No webhook: a Listener set needs no inbound endpoint (the simulator sends
  // no deliveries; the manager's intake listens but hears nothing).
  auto manager = std::make_unique<test::octorun_process>(
      o.octorun, test::octorun_args(kubeconfig, ns, "bench"), "bench-webhook-secret", log);
  if (manager->wait_leading(60s).empty()) fail("the manager did not start leading; see " + log);
  lease_watch lease(watch_cfg, ns, "bench");  // the identity octorun_args gives
  // The pod -> online bridge: a runner connects once kwok runs its pod.
  namespace_watch w(watch_cfg, ns, *sim);
  test::kubectl(
      c, "-n " + ns + " create secret generic github --from-literal=github_token=ghp_simulator >/dev/null");
  std::this_thread::sleep_for(2s);  // let the leading manager settle before its baseline
  r.leading = status_of(manager->pid());

  // Setup: create the set(s), wait for every session.
  sim->reset_counts();
  auto kube_before = manager_requests(c);
  auto t0 = clock_type::now();
  test::kubectl(c, "-n " + ns + " create -f - >/dev/null <<'EOF'\n" +
                       runnersets_json(variants, sim->ghes_url() + "/acme", o) + "\nEOF");
  if (!sim->wait_until([&](const sim::simulator& s) { return open_sessions(s) >= n; }, 600s))
    fail("only " + std::to_string(open_sessions(*sim)) + " of " + std::to_string(n) +
         " sessions opened; see " + log);
  r.setup_s = secs(clock_type::now() - t0);
  r.setup_calls = sim->call_counts();
  auto calls_at_open = sum_calls(r.setup_calls);
  std::this_thread::sleep_for(std::chrono::seconds(o.settle_s));  // an idle interval, not synchronisation
  r.idle = status_of(manager->pid());
  r.idle_calls = sum_calls(sim->call_counts()) - calls_at_open;
  r.scale_sets = static_cast<int>(sim->scale_sets().size());
  r.sessions = open_sessions(*sim);
  auto kube_idle = manager_requests(c);
  r.kube_setup = kube_writes(kube_idle, kube_before);
  auto ready =
      test::kubectl(c, "-n " + ns +
                           " get runnersets -o jsonpath='{range .items[*]}{.status.observedGeneration}"
                           "{\"\\n\"}{end}'");
  for (size_t p = 0; (p = ready.find('1', p)) != std::string::npos; ++p) ++r.runnersets_ready;

  // Burst: jobs_per jobs per variant, round robin, each held running.
  if (o.jit_latency_ms > 0) {
    sim::fault slow;  // GitHub's own latency on generate-jitconfig (status 0: the real answer, late)
    slow.endpoint = "scaleset.generate_jitconfig";
    slow.status = 0;
    slow.count = -1;
    slow.latency = std::chrono::milliseconds(o.jit_latency_ms);
    sim->add_fault(slow);
  }
  auto gh_before = sum_calls(sim->call_counts());
  std::map<std::int64_t, clock_type::time_point> queued_at, running_at;
  std::vector<std::int64_t> ids;
  for (int k = 0; k < o.jobs_per; ++k)
    for (int i = 0; i < n; ++i) {
      sim::job_spec j;
      j.repository = "acme/app";
      j.labels = {"self-hosted", "linux", label(i)};
      j.duration = -1ms;
      auto id = sim->add_job(j);
      queued_at[id] = clock_type::now();
      ids.push_back(id);
    }
  // The simulator wakes the predicate on every state change.
  sim->wait_until(
      [&](const sim::simulator& s) {
        for (auto id : ids)
          if (!running_at.count(id) && s.job_state(id) == "running") running_at[id] = clock_type::now();
        return running_at.size() == ids.size();
      },
      600s);
  if (running_at.size() != ids.size())
    fail(std::to_string(running_at.size()) + " of " + std::to_string(ids.size()) + " jobs running; see " +
         log);
  auto last = queued_at.begin()->second;
  for (const auto& [id, t] : running_at) last = std::max(last, t);
  r.burst_s = secs(last - queued_at[ids.front()]);
  auto pods = w.pod_created();
  for (const auto& [job, runner] : runner_of_jobs(*sim)) {
    r.q_running.push_back(ms(running_at[job] - queued_at[job]));
    if (auto p = pods.find(runner); p != pods.end()) r.q_pod.push_back(ms(p->second - queued_at[job]));
  }
  std::this_thread::sleep_for(std::chrono::seconds(o.settle_s));
  r.burst = status_of(manager->pid());
  for (auto id : ids) sim->complete_job(id);
  if (!w.wait([](const namespace_watch& x) { return x.runners() == 0 && x.pods() == 0; }, 600s))
    fail("runners were not removed; see " + log);
  r.burst_calls_per_job =
      static_cast<double>(sum_calls(sim->call_counts()) - gh_before) / static_cast<double>(ids.size());
  r.extra_runners = static_cast<int>(w.runners_seen()) - static_cast<int>(ids.size());
  std::this_thread::sleep_for(std::chrono::seconds(o.settle_s));
  r.after = status_of(manager->pid());
  r.kube_burst = kube_writes(manager_requests(c), kube_idle);

  // Stop: how long SIGTERM takes to release the Lease, to close the GitHub
  // sessions (a successor cannot open one before) and to exit.
  auto t_stop = clock_type::now();
  std::thread stopper([&] {
    manager->stop(SIGTERM);
    r.stop_s = secs(clock_type::now() - t_stop);
  });
  if (auto released = lease.wait_released(120s)) r.lease_released_s = secs(*released - t_stop);
  r.sessions_closed_s = sim->wait_until([](const sim::simulator& s) { return open_sessions(s) == 0; }, 120s)
                            ? secs(clock_type::now() - t_stop)
                            : -1;
  stopper.join();
  r.sessions_after_stop = open_sessions(*sim);
  test::kubectl(c, "delete namespace " + ns + " --wait=false >/dev/null");
  return r;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--shape")
      o.shape = v;
    else if (k == "--octorun")
      o.octorun = v;
    else if (k == "--variants")
      o.variants = std::atoi(v.c_str());
    else if (k == "--jobs-per")
      o.jobs_per = std::atoi(v.c_str());
    else if (k == "--max-runners")
      o.max_runners = std::atoi(v.c_str());
    else if (k == "--reps")
      o.reps = std::atoi(v.c_str());
    else if (k == "--settle-s")
      o.settle_s = std::atoi(v.c_str());
    else if (k == "--jit-latency-ms")
      o.jit_latency_ms = std::atoi(v.c_str());
    else if (k == "--long-poll-s")
      o.long_poll_s = std::atoi(v.c_str());
    else
      fail("unknown option " + k);
  }
  if (o.variants < 1 || o.variants > 20) fail("--variants must be 1..20 (a RunnerSet has at most 20)");
  return o;
}

// One row per measure, one column per run and the median.
struct table {
  std::vector<std::pair<std::string, std::vector<double>>> rows;
  void add(const std::string& name, double v) {
    for (auto& [k, vals] : rows)
      if (k == name) return vals.push_back(v);
    rows.push_back({name, {v}});
  }
};

void print(const char* title, const table& t) {
  std::printf("\n%s\n", title);
  size_t runs = t.rows.empty() ? 0 : t.rows.front().second.size();
  std::printf("%-34s", "measure");
  for (size_t i = 0; i < runs; ++i) std::printf(" %9s%zu", "run", i + 1);
  std::printf(" %10s\n", "median");
  for (const auto& [k, v] : t.rows) {
    std::printf("%-34s", k.c_str());
    for (double x : v) std::printf(" %10.1f", x);
    std::printf(" %10.1f\n", median(v));
  }
  std::fflush(stdout);
}

void record(table& t, const run_result& r) {
  t.add("scale sets", r.scale_sets);
  t.add("sessions open (idle)", r.sessions);
  t.add("RunnerSets with a status", r.runnersets_ready);
  t.add("setup: created -> all sessions (s)", r.setup_s);
  t.add("setup: GitHub calls", static_cast<double>(sum_calls(r.setup_calls)));
  for (const auto& [k, v] : r.setup_calls)
    if (!k.starts_with("webhook.") && v > 0) t.add("  " + k, static_cast<double>(v));
  t.add("setup: kube writes", static_cast<double>(r.kube_setup));
  t.add("idle: GitHub calls in settle", static_cast<double>(r.idle_calls));
  t.add("RSS leading, no set (MiB)", r.leading.rss_mib);
  t.add("threads leading, no set", r.leading.threads);
  t.add("RSS idle (MiB)", r.idle.rss_mib);
  t.add("HWM idle (MiB)", r.idle.hwm_mib);
  t.add("threads idle", r.idle.threads);
  t.add("q>running p50 (ms)", percentile(r.q_running, 0.5));
  t.add("q>running p99 (ms)", percentile(r.q_running, 0.99));
  t.add("q>pod p50 (ms)", percentile(r.q_pod, 0.5));
  t.add("q>pod p99 (ms)", percentile(r.q_pod, 0.99));
  t.add("burst: queued -> all running (s)", r.burst_s);
  t.add("burst: GitHub calls per job", r.burst_calls_per_job);
  t.add("burst: kube writes per job",
        static_cast<double>(r.kube_burst) / static_cast<double>(r.q_running.size()));
  t.add("burst: Runners beyond 1 per job", r.extra_runners);
  t.add("RSS all running (MiB)", r.burst.rss_mib);
  t.add("threads all running", r.burst.threads);
  t.add("RSS after burst, idle (MiB)", r.after.rss_mib);
  t.add("HWM after burst (MiB)", r.after.hwm_mib);
  t.add("threads after burst", r.after.threads);
  t.add("SIGTERM -> Lease released (s)", r.lease_released_s);
  t.add("SIGTERM -> last session closed (s)", r.sessions_closed_s);
  t.add("SIGTERM -> exit (s)", r.stop_s);
  t.add("sessions left open after exit", r.sessions_after_stop);
}

}  // namespace

int main(int argc, char** argv) {
  auto o = parse(argc, argv);
  auto bench = prepare_bench_cluster();
  if (!bench) fail(bench.error());
  const auto& c = bench->cluster;
  const auto& kubeconfig = bench->manager_kubeconfig;
  const auto* watch_cfg = &bench->watch;

  const bool do_a = o.shape != "B", do_b = o.shape != "A";
  std::printf(
      "%d variants, %d jobs each (held running), maxRunners %d per scale set, %d repetitions, "
      "long poll %d s, JIT latency %d ms\n A: one RunnerSet with %d variants; B: %d RunnerSets without "
      "variants\n",
      o.variants, o.jobs_per, o.max_runners, o.reps, o.long_poll_s, o.jit_latency_ms, o.variants, o.variants);
  table a, b;
  // Alternating shapes spreads the machine's noise over both.
  for (int rep = 0; rep < o.reps; ++rep) {
    if (do_a) {
      auto r = run(true, c, *watch_cfg, kubeconfig, o);
      record(a, r);
      std::printf(
          "rep %d A: setup %.1f s, q>running p50 %.0f ms p99 %.0f ms, RSS %.1f/%.1f MiB, %d threads\n",
          rep + 1, r.setup_s, percentile(r.q_running, 0.5), percentile(r.q_running, 0.99), r.idle.rss_mib,
          r.burst.rss_mib, r.idle.threads);
      std::fflush(stdout);
    }
    if (do_b) {
      auto r = run(false, c, *watch_cfg, kubeconfig, o);
      record(b, r);
      std::printf(
          "rep %d B: setup %.1f s, q>running p50 %.0f ms p99 %.0f ms, RSS %.1f/%.1f MiB, %d threads\n",
          rep + 1, r.setup_s, percentile(r.q_running, 0.5), percentile(r.q_running, 0.99), r.idle.rss_mib,
          r.burst.rss_mib, r.idle.threads);
      std::fflush(stdout);
    }
  }
  if (do_a) print("A: one RunnerSet with variants", a);
  if (do_b) print("B: one RunnerSet per label set", b);
  if (do_a && do_b) {
    std::printf("\n%-34s %10s %10s\n", "median", "A", "B");
    for (const auto& [k, va] : a.rows)
      for (const auto& [kb, vb] : b.rows)
        if (k == kb) std::printf("%-34s %10.1f %10.1f\n", k.c_str(), median(va), median(vb));
  }
  return 0;
}
