// Pods labelled for RunnerSets that do not exist (not in ctest): the real
// octorun binary leading with one RunnerSet in a namespace, while the bench
// creates `--pods` Pods there, each labelled octorun.io/runnerset=<a name of
// its own> for a set that does not exist, then deletes them. The manager's
// VmRSS and actor count (octorun_manager_actors) before, during and after:
// what such Pods cost it (issue 32; README.md, "Unknown sets").
//
//   unknown_sets_bench [--pods 50000] [--threads 8]
// Uses the cluster in $OCTORUN_TEST_CLUSTER, or starts a private one.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "adapters/kube/client.hpp"
#include "bench/manager/burst.hpp"

namespace {

using namespace octorun;
using namespace octorun::bench;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct options {
  int pods = 50000, threads = 8;
};

constexpr const char* usage =
    "unknown_sets_bench [--pods 50000] [--threads 8]\n"
    "See bench/manager/README.md.\n";

options parse(int argc, char** argv) {
  check_flag_pairs(argc, argv, usage);
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (flag == "--pods" && v > 0)
      o.pods = v;
    else if (flag == "--threads" && v > 0)
      o.threads = v;
    else
      fail("unknown option or bad value: " + flag + " " + argv[i + 1]);
  }
  return o;
}

// An unlabelled gauge or counter series (`name value`), or the first series
// of `name` whose labels contain `label`; -1 if absent.
double metric(const std::string& metrics_base, const std::string& name, const std::string& label = {}) {
  if (label.empty()) {
    auto v = test::scrape_metric(metrics_base, name, {});
    if (!v.empty()) return std::atof(v.c_str());
    // No label set: `name value`.
    http::client client;
    client.set_plain_http(true);
    auto r = client.perform({"GET", metrics_base + "/metrics", {}, {}, std::chrono::seconds(5)});
    if (!r || r->status != 200) return -1;
    const auto at = r->body.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::atof(r->body.c_str() + at + name.size() + 2);
  }
  auto v = test::scrape_metric(metrics_base, name, {label});
  return v.empty() ? 0 : std::atof(v.c_str());
}

struct sample {
  memory mem;
  double actors = 0;
};

sample take(const manager_setup& s, const std::string& metrics_base) {
  return {memory_of(s.manager->pid()), metric(metrics_base, "octorun_manager_actors")};
}

void print(const char* when, const sample& x) {
  std::printf("  %-44s VmRSS %7lld KiB  VmHWM %7lld KiB  actors %5.0f\n", when,
              static_cast<long long>(x.mem.rss_kib), static_cast<long long>(x.mem.hwm_kib), x.actors);
  std::fflush(stdout);
}

// A Pod no scheduler takes (schedulerName of none), so nothing runs or writes
// its status: it costs the control plane one object.
std::string ghost_pod(int i, const std::string& set) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"ghost-)" + std::to_string(i) +
         R"(","labels":{"octorun.io/runnerset":")" + set +
         R"(","octorun.io/bench":"ghost"}},"spec":{"schedulerName":"octorun-bench-nobody",)"
         R"("containers":[{"name":"c","image":"registry.invalid/none"}]}})";
}

}  // namespace

int main(int argc, char** argv) {
  auto o = parse(argc, argv);
  auto bench = prepare_bench_cluster();
  if (!bench) fail(bench.error());
  burst_options bo;
  manager_setup s(bench->cluster, bench->manager_kubeconfig, bo, 1);
  const auto metrics_base = s.manager->wait_metrics(10s);
  if (metrics_base.empty()) fail("the manager serves no metrics; see " + s.log);
  const std::string rejected = "reason=\"unknown_runnerset\"";

  std::printf("unknown sets: %d Pods in %s, each labelled for a RunnerSet of its own that does not exist\n",
              o.pods, s.ns.c_str());
  std::this_thread::sleep_for(10s);  // a measurement interval, not synchronisation
  print("leading, one set, idle", take(s, metrics_base));

  std::atomic<int> next{0}, created{0}, failed{0};
  std::random_device seed;
  const auto salt = std::to_string(seed());
  auto start = clock_type::now();
  std::vector<std::thread> creators;
  for (int t = 0; t < o.threads; ++t)
    creators.emplace_back([&] {
      kube::client k(bench->watch);
      const kube::resource pods{"", "v1", "pods"};
      for (int i = next++; i < o.pods; i = next++) {
        // A set name of its own per Pod: the worst case for an actor per name.
        auto r = k.create(pods, s.ns, ghost_pod(i, "ghost-" + salt + "-" + std::to_string(i)));
        if (r)
          ++created;
        else if (++failed <= 5)
          std::fprintf(stderr, "create ghost-%d: %s\n", i, kube::to_string(r.error()).c_str());
      }
    });
  const int step = std::max(1, o.pods / 5);
  for (int mark = step; mark <= o.pods; mark += step) {
    while (created + failed < mark) std::this_thread::sleep_for(200ms);  // progress, not synchronisation
    const double secs = std::chrono::duration<double>(clock_type::now() - start).count();
    char when[64];
    std::snprintf(when, sizeof when, "%d Pods created (%.0f s)", mark, secs);
    print(when, take(s, metrics_base));
  }
  for (auto& t : creators) t.join();
  const double create_s = std::chrono::duration<double>(clock_type::now() - start).count();
  std::printf("  created %d (%d failed) in %.1f s (%.0f/s)\n", created.load(), failed.load(), create_s,
              created / create_s);

  // Every one seen by the manager's Pod watch: each is counted as refused.
  auto deadline = clock_type::now() + 600s;
  while (metric(metrics_base, "octorun_rejected_input_total", rejected) < created &&
         clock_type::now() < deadline)
    std::this_thread::sleep_for(1s);
  std::printf("  octorun_rejected_input_total{reason=\"unknown_runnerset\"} = %.0f\n",
              metric(metrics_base, "octorun_rejected_input_total", rejected));
  std::this_thread::sleep_for(10s);  // a measurement interval, not synchronisation
  print("all created, seen by the watch, 10 s later", take(s, metrics_base));

  // Deleted one by one (a delete of the collection outlives a client's
  // timeout and stops with it), by as many threads as made them.
  start = clock_type::now();
  next = 0;
  std::vector<std::thread> deleters;
  for (int t = 0; t < o.threads; ++t)
    deleters.emplace_back([&] {
      kube::client k(bench->watch);
      const kube::resource pods{"", "v1", "pods"};
      for (int i = next++; i < o.pods; i = next++) k.remove(pods, s.ns, "ghost-" + std::to_string(i));
    });
  for (auto& t : deleters) t.join();
  std::printf("  deleted in %.1f s\n", std::chrono::duration<double>(clock_type::now() - start).count());
  std::this_thread::sleep_for(30s);  // a measurement interval, not synchronisation
  print("all deleted, 30 s later", take(s, metrics_base));
  return failed > 0 ? 1 : 0;
}
