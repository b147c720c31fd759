// One set's burst beside other sets' first runners (not in ctest): the real
// octorun binary leading in two namespaces. A RunnerSet "linux" in the
// first asks for `--burst` Runners at once (minRunners, maxRunners both
// `--burst`); while they are being made, a RunnerSet "quiet" in the same
// namespace and one of the same name in the second namespace each ask for
// one Runner more, `--samples` times. How long each of those waits (the
// demand written → its Runner, then its Pod, seen by a watch), against the
// same asked with no burst: what one set's burst costs the others
// (issue 32; README.md, "Fairness").
//
//   fairness_bench [--burst 1000] [--samples 3] [--binary PATH]
// Uses the cluster in $OCTORUN_TEST_CLUSTER, or starts a private one.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "adapters/kube/client.hpp"
#include "bench/common/lifecycle.hpp"
#include "bench/common/stats.hpp"
#include "bench/manager/burst.hpp"

namespace {

using namespace octorun;
using namespace octorun::bench;
using namespace std::chrono_literals;

struct options {
  int burst = 1000, samples = 3;
  std::string binary;
};

constexpr const char* usage =
    "fairness_bench [--burst 1000] [--samples 3] [--binary PATH]\n"
    "--binary: an octorun binary to run instead of the one built with the bench.\n"
    "See bench/manager/README.md.\n";

options parse(int argc, char** argv) {
  check_flag_pairs(argc, argv, usage);
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (flag == "--burst" && v > 0)
      o.burst = v;
    else if (flag == "--samples" && v > 0)
      o.samples = v;
    else if (flag == "--binary")
      o.binary = argv[i + 1];
    else
      fail("unknown option or bad value: " + flag + " " + argv[i + 1]);
  }
  return o;
}

const kube::resource runnersets{"octorun.io", "v1alpha1", "runnersets", true};

void set_min_runners(kube::client& k, const std::string& ns, const std::string& set, int n) {
  auto r = k.patch(runnersets, ns, set, kube::patch_type::merge,
                   R"({"spec":{"minRunners":)" + std::to_string(n) + "}}");
  if (!r) fail("patching " + ns + "/" + set + ": " + kube::to_string(r.error()));
}

// One more Runner asked of a quiet set: when, and the Runner that came.
struct sample {
  double asked_at = 0;  // unix ms
  std::string runner;
};

struct quiet_set {
  std::string ns;
  std::unique_ptr<lifecycle_watch> watch;
  int asked = 0;
  std::vector<sample> idle, during;  // without the burst, while it is being made
};

// Each quiet set asks for one Runner more, one right after the other, and
// the new Runner of each is awaited (with `pods`, its Pod too).
void take_samples(kube::client& k, std::vector<quiet_set>& quiet, bool during, bool pods) {
  std::vector<std::set<std::string>> before;
  for (auto& q : quiet) {
    before.emplace_back();
    for (const auto& [name, t] : q.watch->times()) before.back().insert(name);
    (during ? q.during : q.idle).push_back({unix_ms_now(), {}});
    set_min_runners(k, q.ns, "quiet", ++q.asked);
  }
  for (size_t i = 0; i < quiet.size(); ++i) {
    auto& q = quiet[i];
    std::string fresh;
    auto came = [&](const lifecycle_watch& w) {
      for (const auto& [name, t] : w.times())
        if (before[i].count(name) == 0 && t.created > 0 && (!pods || t.pod > 0)) {
          fresh = name;
          return true;
        }
      return false;
    };
    if (!q.watch->wait(came, 300s)) fail("no new Runner in " + q.ns + "/quiet within 300 s");
    (during ? q.during : q.idle).back().runner = fresh;
  }
}

void print_samples(const char* when, const quiet_set& q, const std::vector<sample>& samples,
                   double burst_last = 0) {
  auto times = q.watch->times();
  std::printf("  %-16s %-24s Runner", when, (q.ns + "/quiet").c_str());
  for (const auto& x : samples) std::printf(" %6.0f", times[x.runner].created - x.asked_at);
  std::printf(" ms; Pod");
  for (const auto& x : samples) std::printf(" %6.0f", times[x.runner].pod - x.asked_at);
  std::printf(" ms");
  if (burst_last > 0) {
    std::printf("; Runner before the burst's last:");
    for (const auto& x : samples) std::printf(" %s", times[x.runner].created < burst_last ? "yes" : "no");
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  auto o = parse(argc, argv);
  auto bench = prepare_bench_cluster();
  if (!bench) fail(bench.error());
  burst_options bo;
  bo.other_namespaces = 1;
  bo.binary = o.binary;
  bo.rate_limit = 15000;  // an App installation's budget: each Runner costs two calls
  manager_setup s(bench->cluster, bench->manager_kubeconfig, bo, o.burst);
  const auto scope = s.sim->ghes_url() + "/acme";
  std::vector<quiet_set> quiet(2);
  quiet[0].ns = s.ns;
  quiet[1].ns = s.others.at(0);
  for (auto& q : quiet) {
    test::kubectl(s.c, "-n " + q.ns + " create -f - >/dev/null <<'EOF'\n" +
                           runnerset_json("quiet", scope, bo.intake, 2 * o.samples) + "\nEOF");
    test::kubectl(s.c, "-n " + q.ns +
                           " wait runnerset/quiet --for=jsonpath='{.status.observedGeneration}'=1 "
                           "--timeout=60s >/dev/null");
    q.watch = std::make_unique<lifecycle_watch>(bench->watch, q.ns, nullptr, "octorun.io/runnerset=quiet");
  }
  lifecycle_watch burst(bench->watch, s.ns, nullptr, "octorun.io/runnerset=linux");
  for (auto* w : {quiet[0].watch.get(), quiet[1].watch.get(), &burst})
    if (!w->wait([](const lifecycle_watch& x) { return x.synced(); }, 60s)) fail("the watches did not sync");
  kube::client k(bench->watch);
  std::printf(
      "fairness: %s/linux asks for %d Runners at once; %s/quiet and %s/quiet ask for one more, %d "
      "times without the burst, then %d times while it is being made\n",
      s.ns.c_str(), o.burst, quiet[0].ns.c_str(), quiet[1].ns.c_str(), o.samples, o.samples);
  std::fflush(stdout);

  for (int i = 0; i < o.samples; ++i) take_samples(k, quiet, false, true);

  // The burst; a sample each time it has made another share of its Runners.
  const double burst_at = unix_ms_now();
  set_min_runners(k, s.ns, "linux", o.burst);
  for (int i = 1; i <= o.samples; ++i) {
    const auto mark = static_cast<size_t>(o.burst) * i / (o.samples + 1);
    if (!burst.wait([&](const lifecycle_watch& w) { return w.runners_seen() >= mark; }, 300s))
      fail("the burst did not reach " + std::to_string(mark) + " Runners; see " + s.log);
    std::printf("  sample %d: at %zu of the burst's Runners, %.1f s into it\n", i, burst.runners_seen(),
                (unix_ms_now() - burst_at) / 1000);
    take_samples(k, quiet, true, false);
  }
  const auto all = static_cast<size_t>(o.burst);
  if (!burst.wait([&](const lifecycle_watch& w) { return w.runners_seen() >= all && w.counts().pods >= all; },
                  600s))
    fail("the burst's Runners and Pods were not all made; see " + s.log);
  double burst_last = 0, burst_last_pod = 0;
  for (const auto& [name, t] : burst.times()) {
    burst_last = std::max(burst_last, t.created);
    burst_last_pod = std::max(burst_last_pod, t.pod);
  }
  for (auto& q : quiet)  // the samples' Pods
    if (!q.watch->wait(
            [&](const lifecycle_watch& w) { return w.counts().pods >= static_cast<size_t>(q.asked); }, 300s))
      fail("the quiet sets' Pods were not all made");
  std::printf("  the burst's %d Runners made in %.1f s, their Pods in %.1f s\n", o.burst,
              (burst_last - burst_at) / 1000, (burst_last_pod - burst_at) / 1000);
  std::printf("\ndemand written -> the new Runner, its Pod (first seen by a watch), each sample:\n");
  for (const auto& q : quiet) print_samples("no burst", q, q.idle);
  for (const auto& q : quiet) print_samples("during the burst", q, q.during, burst_last);
  std::fflush(stdout);

  // Every Runner goes before the manager stops (their finalizers are its).
  set_min_runners(k, s.ns, "linux", 0);
  for (auto& q : quiet) set_min_runners(k, q.ns, "quiet", 0);
  for (auto* w : {quiet[0].watch.get(), quiet[1].watch.get(), &burst})
    if (!w->wait([](const lifecycle_watch& x) { return x.counts().total == 0; }, 600s))
      fail("the Runners were not all removed; see " + s.log);
  return 0;
}
