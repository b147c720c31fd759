#include "bench/manager/burst.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string_view>

#include "adapters/kube/client.hpp"
#include "test/support/poll.hpp"

#ifndef OCTORUN_BINARY
#error "OCTORUN_BINARY must name the octorun binary"
#endif

namespace octorun::bench {

using namespace std::chrono_literals;

void fail(const std::string& why) {
  std::fprintf(stderr, "bench: %s\n", why.c_str());
  std::exit(1);
}

void check_flag_pairs(int argc, char** argv, const char* usage) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
  if (argc % 2 == 0)
    fail(std::string(argv[argc - 1]) + " has no value (every option is --flag value; --help)");
}

std::string runnerset_json(const std::string& name, const std::string& scope_url, const std::string& intake,
                           int max_runners) {
  return R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" + name +
         R"("},"spec":{"scopeURL":")" + scope_url + R"(","credentialsSecretName":"github","intake":")" +
         intake + R"(","runnerLabels":[")" + name + R"("],"minRunners":0,"maxRunners":)" +
         std::to_string(max_runners) +
         R"(,"template":{"spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0"}]}}}})";
}

namespace {

sim::simulator_options simulator_for(const burst_options& o) {
  sim::simulator_options so;
  so.rate_limit = o.rate_limit;
  if (o.intake == "Listener") so.long_poll = 20s;
  return so;
}

bool session_open(const sim::simulator& s) {
  auto sets = s.scale_sets();
  return !sets.empty() &&
         std::all_of(sets.begin(), sets.end(), [](const auto& x) { return !x.session_id.empty(); });
}

}  // namespace

manager_setup::manager_setup(const test::cluster_info& cl, const std::string& kubeconfig,
                             const burst_options& o, int max_runners)
    : c(cl) {
  ns = test::make_namespace(c, "bench");
  for (int i = 0; i < o.other_namespaces; ++i) others.push_back(test::make_namespace(c, "bench"));
  auto s = sim::simulator::start(simulator_for(o));
  if (!s) fail("simulator: " + s.error());
  sim = std::move(*s);
  sim->add_organization("acme");
  const std::string secret = "bench-webhook-secret";
  log = "/tmp/octorun-bench-" + ns + ".log";
  auto args = test::octorun_args(kubeconfig, ns, "bench");
  if (!others.empty()) {
    std::string watched = "--namespaces=" + ns;  // after --namespace: the later flag decides
    for (const auto& other : others) watched += "," + other;
    args.push_back(watched);
  }
  args.insert(args.end(), o.manager_args.begin(), o.manager_args.end());
  std::vector<std::string> env;
  if (o.trace_requests) {
    trace_file = "/tmp/octorun-bench-" + ns + ".trace";
    env.push_back("OCTORUN_KUBE_TRACE=" + trace_file);
  }
  manager = std::make_unique<test::octorun_process>(o.binary.empty() ? OCTORUN_BINARY : o.binary, args,
                                                    secret, log, env);
  auto url = manager->wait_leading(60s);
  if (url.empty()) fail("the manager did not start leading; see " + log);
  // The Listener intake takes its jobs from the message session, not from webhooks.
  if (o.intake == "Webhook") sim->set_webhook(url, secret);
  for (const auto& in : others)
    test::kubectl(
        c, "-n " + in + " create secret generic github --from-literal=github_token=ghp_simulator >/dev/null");
  test::kubectl(
      c, "-n " + ns + " create secret generic github --from-literal=github_token=ghp_simulator >/dev/null");
  test::kubectl(c, "-n " + ns + " create -f - >/dev/null <<'EOF'\n" +
                       runnerset_json("linux", sim->ghes_url() + "/acme", o.intake, max_runners) + "\nEOF");
  // The set is read and its first status written before anything is measured.
  test::kubectl(c, "-n " + ns +
                       " wait runnerset/linux --for=jsonpath='{.status.observedGeneration}'=1 --timeout=60s "
                       ">/dev/null");
  if (o.intake == "Listener" && !sim->wait_until(session_open, 60s))
    fail("the manager opened no message session; see " + log);
}

manager_setup::~manager_setup() {
  manager->stop(SIGTERM);
  for (const auto& in : others) test::kubectl(c, "delete namespace " + in + " --wait=false >/dev/null");
  test::kubectl(c, "delete namespace " + ns + " --wait=false >/dev/null");
  if (!trace_file.empty()) std::remove(trace_file.c_str());
}

std::int64_t github_calls(const sim::simulator& s) {
  std::int64_t n = 0;
  for (const auto& [k, v] : s.call_counts())
    if (!k.starts_with("webhook.")) n += v;
  return n;
}

namespace {
// Waits until the manager's writes (its Lease renewals aside) have not
// changed for `quiet`, at most `within`.
void await_settled_writes(const test::cluster_info& c, std::chrono::seconds quiet,
                          std::chrono::seconds within) {
  auto writes = [&] {
    auto counts = manager_requests(c);
    std::erase_if(counts,
                  [](const auto& kv) { return kv.first == "reads" || kv.first.starts_with("leases"); });
    return counts;
  };
  auto last = writes();
  auto changed = std::chrono::steady_clock::now();
  auto unchanged_for = [&] {
    if (auto now = writes(); now != last) {
      last = std::move(now);
      changed = std::chrono::steady_clock::now();
    }
    return std::chrono::steady_clock::now() - changed;
  };
  if (!test::poll(
          unchanged_for, [&](auto d) { return d >= quiet; }, within))
    std::fprintf(stderr, "warning: the manager's writes were still changing after %llds\n",
                 static_cast<long long>(within.count()));
}
}  // namespace

burst_result run_burst(const bench_cluster& b, const burst_options& o) {
  const auto& c = b.cluster;
  manager_setup s(c, b.manager_kubeconfig, o, o.max_runners);
  auto* sim = s.sim.get();
  lifecycle_watch w(b.watch, s.ns, [sim](const std::string& runner) { sim->runner_online(runner); });
  if (!w.wait([](const lifecycle_watch& x) { return x.synced(); }, 60s)) fail("the watches did not sync");
  kube::client admin(b.watch);
  auto before = manager_requests(c);
  auto latency_before = read_request_latencies(admin);
  const pid_t apiserver = apiserver_pid(c);
  const double manager_cpu = cpu_seconds(s.manager->pid()), apiserver_cpu = cpu_seconds(apiserver);
  sim->reset_counts();

  const double start = unix_ms_now();
  auto ids = test::queue_jobs(*sim, o.jobs, std::chrono::milliseconds(o.job_ms));
  if (!test::all_completed(*sim, ids, 600s)) fail("jobs did not complete; see " + s.log);
  if (!w.wait([](const lifecycle_watch& x) { return x.counts().total == 0 && x.runners_seen() > 0; }, 300s))
    fail("runners were not removed; see " + s.log);
  const double runners_gone = unix_ms_now();
  burst_result r;
  r.manager_cpu_s = cpu_seconds(s.manager->pid()) - manager_cpu;
  r.apiserver_cpu_s = cpu_seconds(apiserver) - apiserver_cpu;
  // Pods go too before the counts are read (their deletion is part of each job).
  if (!w.wait([](const lifecycle_watch& x) { return x.counts().pods == 0; }, 300s))
    fail("pods were not removed");
  // The Event recorder writes one Event at a time, behind the jobs: its
  // backlog is part of their writes, so the counts are read once the
  // manager's writes (Lease renewals aside: they never stop) have not
  // changed for 2 s. Its reads are not waited for (a watch restarts now
  // and then).
  await_settled_writes(c, 2s, 60s);
  auto after = manager_requests(c);
  auto latency_after = read_request_latencies(admin);

  auto times = w.times();
  auto jobs = parse_sim_jobs(sim->state_json());
  double end = start;
  for (const auto& [name, t] : times) end = std::max(end, t.deleted);
  r.seconds = (end - start) / 1000;
  r.jobs_per_s = o.jobs / r.seconds;
  std::vector<std::pair<double, std::string>> pod_order;
  for (const auto& [name, t] : times)
    if (t.pod > 0) pod_order.emplace_back(t.pod, name);
  std::sort(pod_order.begin(), pod_order.end());
  std::set<std::string> first_wave;
  for (size_t i = 0; i < pod_order.size() && i < static_cast<size_t>(o.max_runners); ++i)
    first_wave.insert(pod_order[i].second);
  for (const auto& j : jobs) {
    auto t = times.find(j.runner_name);
    if (j.runner_name.empty() || t == times.end()) continue;
    if (t->second.pod > 0) {
      r.queued_to_pod.push_back(t->second.pod - j.queued_ms);
      if (first_wave.count(j.runner_name)) r.queued_to_pod_first_wave.push_back(t->second.pod - j.queued_ms);
    }
    if (t->second.deleted > 0 && j.completed_ms > 0)
      r.completed_to_gone.push_back(t->second.deleted - j.completed_ms);
  }
  r.stages = job_stages(jobs, times);
  for (const auto& [k, v] : after) r.requests[k] = v - before[k];
  for (const auto& [k, h] : latency_after) {
    auto was = latency_before.find(k);
    auto delta = was == latency_before.end() ? h : h - was->second;
    if (delta.count > 0) r.apiserver[k] = delta;
  }
  if (!s.trace_file.empty()) {
    auto trace = read_request_trace(s.trace_file, start, runners_gone);
    r.manager_requests = request_stats_of(trace);
    r.actor_delays = actor_delays(jobs, times, trace);
  }
  r.github = github_calls(*sim);
  r.jit = sim->calls("rest.generate_jitconfig");
  return r;
}

}  // namespace octorun::bench

namespace octorun::bench {

void print_breakdown(const std::vector<burst_result>& runs) {
  std::printf("\nwhere the time went (every job of every run; ms):\n  %-34s %8s %8s %8s\n", "stage", "p50",
              "p90", "p99");
  for (size_t i = 0; !runs.empty() && i < runs[0].stages.size(); ++i) {
    std::vector<double> all;
    for (const auto& r : runs) all.insert(all.end(), r.stages[i].second.begin(), r.stages[i].second.end());
    std::printf("  %-34s %8.0f %8.0f %8.0f\n", runs[0].stages[i].first.c_str(), percentile(all, 0.5),
                percentile(all, 0.9), percentile(all, 0.99));
  }
  for (size_t i = 0; !runs.empty() && i < runs[0].actor_delays.size(); ++i) {
    if (i == 0)
      std::printf(
          "\nthe manager's own delays, event -> the request it leads to (actors' mailboxes and work; ms):\n");
    std::vector<double> all;
    for (const auto& r : runs)
      all.insert(all.end(), r.actor_delays[i].second.begin(), r.actor_delays[i].second.end());
    std::printf("  %-40s %8.0f %8.0f %8.0f  (%zu)\n", runs[0].actor_delays[i].first.c_str(),
                percentile(all, 0.5), percentile(all, 0.9), percentile(all, 0.99), all.size());
  }
  std::map<std::string, histogram> api;
  std::map<std::string, request_stats> mine;
  double manager_cpu = 0, apiserver_cpu = 0, seconds = 0;
  for (const auto& r : runs) {
    for (const auto& [k, h] : r.apiserver) {
      auto [it, added] = api.try_emplace(k, h);
      if (added) continue;
      it->second.sum += h.sum;
      it->second.count += h.count;
      for (size_t b = 0; b < it->second.buckets.size() && b < h.buckets.size(); ++b)
        it->second.buckets[b].second += h.buckets[b].second;
    }
    for (const auto& s : r.manager_requests) {
      auto& m = mine[s.key];
      m.key = s.key;
      m.count += s.count;
      m.queue_ms.insert(m.queue_ms.end(), s.queue_ms.begin(), s.queue_ms.end());
      m.limiter_ms.insert(m.limiter_ms.end(), s.limiter_ms.begin(), s.limiter_ms.end());
      m.wire_ms.insert(m.wire_ms.end(), s.wire_ms.begin(), s.wire_ms.end());
    }
    manager_cpu += r.manager_cpu_s;
    apiserver_cpu += r.apiserver_cpu_s;
    seconds += r.seconds;
  }
  std::printf("\nCPU while the bursts ran (%.1f s in all): manager %.2f s, kube-apiserver %.2f s\n", seconds,
              manager_cpu, apiserver_cpu);
  if (!mine.empty()) {
    std::printf("\nthe manager's requests as it timed them (ms; queue: in the request pool's mailbox):\n");
    std::printf("  %-30s %6s %8s %8s %8s %8s %8s %8s\n", "request", "count", "queue50", "queue99", "limit50",
                "limit99", "wire50", "wire99");
    for (const auto& [k, m] : mine)
      std::printf("  %-30s %6zu %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f\n", k.c_str(), m.count,
                  percentile(m.queue_ms, 0.5), percentile(m.queue_ms, 0.99), percentile(m.limiter_ms, 0.5),
                  percentile(m.limiter_ms, 0.99), percentile(m.wire_ms, 0.5), percentile(m.wire_ms, 0.99));
  }
  std::printf("\nthe apiserver's own latency (apiserver_request_duration_seconds, every client; ms):\n");
  std::printf("  %-30s %7s %8s %8s %8s\n", "request", "count", "mean", "p50", "p99");
  // The resources a job touches (a namespace's deletion between runs lists and deletes every kind: left out).
  auto of_a_job = [](const std::string& key) {
    auto resource = key.substr(key.find(' ') + 1);
    for (const char* r : {"runners", "runnersets", "pods", "secrets", "events", "leases"})
      if (resource == r || resource.starts_with(std::string(r) + "/"))
        return !key.starts_with("DELETE runnersets");
    return false;
  };
  for (const auto& [k, h] : api)
    if (h.count >= 10 && of_a_job(k) && !k.starts_with("WATCH") && !k.starts_with("LIST"))
      std::printf("  %-30s %7.0f %8.1f %8.1f %8.1f\n", k.c_str(), h.count, h.mean_ms(), h.quantile_ms(0.5),
                  h.quantile_ms(0.99));
}

}  // namespace octorun::bench
