// The floor and the manager in one run (not in ctest; see README.md): for
// each size (jobs / maxRunners), the floor (floor.hpp) at every concurrency
// of --connections, the best of them kept; then --reps repetitions that
// alternate the floor at that concurrency and a burst through the octorun
// binary (bench/manager/burst.hpp), and the manager's jobs/s as a ratio of
// the floor's (medians).
//
//   floor_bench [--sizes 100/20,200/50] [--reps 3] [--connections 2,4,8,16,32] [--sweep-reps 2]
//               [--intake Webhook|Listener] [--manager-arg --flag=value]... [--variant-arg --flag=value]...
//               [--breakdown 1] [--binary NAME=PATH]...
// --variant-arg: a second manager configuration (the first's flags plus
// these), run beside the first in every repetition. --binary: octorun
// binaries to compare (before and after a change), each a manager of its
// own in every repetition instead of the one built with the bench. The
// managers run in order in odd repetitions and in reverse in even ones, so
// a control plane that slows as it ages weighs on each alike.
// Uses the cluster in $OCTORUN_TEST_CLUSTER, or starts a private one.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/common/apiserver_metrics.hpp"
#include "bench/floor/floor.hpp"
#include "bench/manager/burst.hpp"

namespace {

using namespace octorun;
using namespace octorun::bench;

struct size_spec {
  int jobs = 0, max_runners = 0;
};

struct options {
  std::vector<size_spec> sizes{{100, 20}, {200, 50}};
  std::vector<int> connections{2, 4, 8, 16, 32};
  int reps = 3, sweep_reps = 2;
  burst_options manager;
  std::vector<std::string> variant_args;
  std::vector<std::pair<std::string, std::string>> binaries;  // name, path
  bool breakdown = false;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

constexpr const char* usage =
    "floor_bench [--sizes 100/20,200/50] [--reps 3] [--connections 2,4,8,16,32] [--sweep-reps 2]\n"
    "            [--intake Webhook|Listener] [--manager-arg --flag=value]... [--variant-arg "
    "--flag=value]...\n"
    "            [--breakdown 1] [--binary NAME=PATH]...\n"
    "See bench/floor/README.md.\n";

options parse(int argc, char** argv) {
  check_flag_pairs(argc, argv, usage);
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--sizes") {
      o.sizes.clear();
      for (const auto& s : split(value, ',')) {
        auto parts = split(s, '/');
        if (parts.size() != 2) fail("--sizes: want JOBS/MAXRUNNERS,..., got " + value);
        o.sizes.push_back({std::atoi(parts[0].c_str()), std::atoi(parts[1].c_str())});
      }
    } else if (flag == "--connections") {
      o.connections.clear();
      for (const auto& c : split(value, ',')) o.connections.push_back(std::max(1, std::atoi(c.c_str())));
    } else if (flag == "--reps") {
      o.reps = std::atoi(value.c_str());
    } else if (flag == "--sweep-reps") {
      o.sweep_reps = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--intake" && (value == "Webhook" || value == "Listener")) {
      o.manager.intake = value;
    } else if (flag == "--manager-arg") {
      o.manager.manager_args.push_back(value);
    } else if (flag == "--variant-arg") {
      o.variant_args.push_back(value);
    } else if (flag == "--binary" && value.find('=') != std::string::npos && value.front() != '=') {
      o.binaries.emplace_back(value.substr(0, value.find('=')), value.substr(value.find('=') + 1));
    } else if (flag == "--breakdown") {
      o.breakdown = value == "1" || value == "true";
    } else {
      fail("unknown option or bad value: " + flag + " " + value);
    }
  }
  o.manager.trace_requests = o.breakdown;
  return o;
}

floor_result floor_once(const bench_cluster& b, const std::string& ns, size_spec s, int connections) {
  floor_options fo;
  fo.jobs = s.jobs;
  fo.max_runners = s.max_runners;
  fo.connections = connections;
  fo.ns = ns;
  auto r = run_floor(b.watch, fo);
  if (r.jobs_per_s <= 0 || r.failed_writes > 0) fail("the floor run failed");
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  auto o = parse(argc, argv);
  auto bench = prepare_bench_cluster();
  if (!bench) fail(bench.error());
  const auto floor_ns = test::make_namespace(bench->cluster, "floor");
  // The manager as configured (--manager-arg), and optionally a variant (--variant-arg) in the same run.
  struct manager_config {
    std::string name, flags;
    burst_options burst;
  };
  std::vector<manager_config> managers = {{"manager", "", o.manager}};
  if (!o.binaries.empty()) managers.clear();
  for (const auto& [name, path] : o.binaries) {
    auto burst = o.manager;
    burst.binary = path;
    managers.push_back({name, "", burst});
  }
  if (!o.variant_args.empty()) {
    auto variant = managers.front().burst;
    variant.manager_args.insert(variant.manager_args.end(), o.variant_args.begin(), o.variant_args.end());
    managers.push_back({"variant", "", variant});
  }
  for (auto& m : managers) {
    for (const auto& a : m.burst.manager_args) m.flags += (m.flags.empty() ? "" : " ") + a;
    if (m.flags.empty()) m.flags = "defaults";
    if (!m.burst.binary.empty()) m.flags += " (" + m.burst.binary + ")";
  }
  std::printf("floor vs manager (%s intake), %d repetitions per size\n", o.manager.intake.c_str(), o.reps);
  for (const auto& m : managers) std::printf("  %s: %s\n", m.name.c_str(), m.flags.c_str());

  for (auto size : o.sizes) {
    std::printf("\n== %d jobs / maxRunners %d ==\nfloor concurrency sweep:\n  %11s %9s %9s %12s %12s\n",
                size.jobs, size.max_runners, "connections", "jobs/s", "writes/job", "job p50 ms",
                "job p99 ms");
    // Each concurrency --sweep-reps times, in rounds (a noisy minute then
    // touches every concurrency alike); the best median wins.
    std::map<int, std::vector<double>> rates;
    for (int round = 0; round < o.sweep_reps; ++round)
      for (int k : o.connections) {
        auto r = floor_once(*bench, floor_ns, size, k);
        rates[k].push_back(r.jobs_per_s);
        std::printf("  %11d %9.2f %9.2f %12.0f %12.0f\n", k, r.jobs_per_s,
                    static_cast<double>(r.writes) / size.jobs, percentile(r.job_ms, 0.5),
                    percentile(r.job_ms, 0.99));
        std::fflush(stdout);
      }
    int best = o.connections.front();
    for (const auto& [k, v] : rates)
      if (median(v) > median(rates[best])) best = k;
    std::printf("best: %d connections (median %.2f jobs/s)\n\n  %4s %12s", best, median(rates[best]), "rep",
                "floor jobs/s");
    for (const auto& m : managers)
      std::printf(" %16s %8s %8s", (m.name + " jobs/s").c_str(), "ratio", "kw/job");
    std::printf("\n");
    std::vector<double> floor_rates;
    std::vector<std::vector<double>> rates_of(managers.size()), ratios_of(managers.size());
    std::vector<std::vector<burst_result>> runs_of(managers.size());
    for (int rep = 0; rep < o.reps; ++rep) {
      auto f = floor_once(*bench, floor_ns, size, best);
      floor_rates.push_back(f.jobs_per_s);
      for (size_t k = 0; k < managers.size(); ++k) {
        const size_t i = rep % 2 == 0 ? k : managers.size() - 1 - k;
        auto bo = managers[i].burst;
        bo.jobs = size.jobs;
        bo.max_runners = size.max_runners;
        auto m = run_burst(*bench, bo);
        rates_of[i].push_back(m.jobs_per_s);
        ratios_of[i].push_back(m.jobs_per_s / f.jobs_per_s);
        runs_of[i].push_back(std::move(m));
      }
      std::printf("  %4d %12.2f", rep + 1, f.jobs_per_s);
      for (size_t i = 0; i < managers.size(); ++i)
        std::printf(" %16.2f %8.3f %8.2f", rates_of[i].back(), ratios_of[i].back(),
                    static_cast<double>(writes_in(runs_of[i].back().requests)) / size.jobs);
      std::printf("\n");
      std::fflush(stdout);
    }
    std::printf("  %4s %12.2f", "med", median(floor_rates));
    for (size_t i = 0; i < managers.size(); ++i)
      std::printf(" %16.2f %8.3f %8s", median(rates_of[i]), median(ratios_of[i]), "");
    std::printf("\n  (ratio: of each repetition's floor; of the medians:");
    for (size_t i = 0; i < managers.size(); ++i)
      std::printf(" %s %.3f", managers[i].name.c_str(), median(rates_of[i]) / median(floor_rates));
    std::printf(")\n");
    for (size_t i = 0; o.breakdown && i < managers.size(); ++i) {
      std::printf("\n-- %s: %s --", managers[i].name.c_str(), managers[i].flags.c_str());
      print_breakdown(runs_of[i]);
    }
  }
  test::kubectl(bench->cluster, "delete namespace " + floor_ns + " --wait=false >/dev/null");
  return 0;
}
