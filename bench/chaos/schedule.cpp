#include "bench/chaos/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>

namespace octorun::chaos {

std::string_view to_string(fault_kind k) {
  switch (k) {
    case fault_kind::leader_kill:
      return "leader-kill";
    case fault_kind::rollout:
      return "sigterm-rollout";
    case fault_kind::both_down:
      return "both-replicas-down";
    case fault_kind::apiserver_restart:
      return "apiserver-restart";
    case fault_kind::etcd_compaction:
      return "etcd-compaction-410";
    case fault_kind::watch_cut:
      return "watch-cut";
    case fault_kind::evict_busy:
      return "evict-busy-pod";
    case fault_kind::evict_idle:
      return "evict-idle-pod";
    case fault_kind::node_recreate:
      return "node-delete-recreate";
    case fault_kind::unschedulable:
      return "pod-unschedulable";
    case fault_kind::namespace_delete:
      return "namespace-delete";
    case fault_kind::github_5xx:
      return "github-5xx-storm";
    case fault_kind::rate_limit_403:
      return "rate-limit-403";
    case fault_kind::rate_limit_429:
      return "rate-limit-429";
    case fault_kind::latency:
      return "github-latency-2s";
    case fault_kind::token_expiry:
      return "token-expiry";
    case fault_kind::session_expiry:
      return "session-expiry";
    case fault_kind::session_conflict:
      return "session-conflict";
    case fault_kind::duplicate_delivery:
      return "duplicate-deliveries";
    case fault_kind::reorder_delivery:
      return "reordered-deliveries";
    case fault_kind::lost_delivery:
      return "lost-delivery";
  }
  return "unknown";
}

std::vector<fault_kind> all_fault_kinds() {
  std::vector<fault_kind> out;
  for (int k = 0; k <= static_cast<int>(fault_kind::lost_delivery); ++k)
    out.push_back(static_cast<fault_kind>(k));
  return out;
}

std::string_view lane_of(fault_kind k) {
  if (k <= fault_kind::both_down) return "manager";
  if (k <= fault_kind::namespace_delete) return "kube";
  return "github";
}

double expected_seconds(fault_kind k, const profile& p) {
  switch (k) {
    case fault_kind::leader_kill:
      return 25;  // the Lease (15 s) expires, the other takes over
    case fault_kind::rollout:
      return 20;
    case fault_kind::both_down:
      return static_cast<double>(p.both_down.count()) + 20;
    case fault_kind::apiserver_restart:
      return 10;
    case fault_kind::etcd_compaction:
      return 5;
    case fault_kind::watch_cut:
      return 4;
    case fault_kind::evict_busy:
    case fault_kind::evict_idle:
      return 2;
    case fault_kind::node_recreate:
      return static_cast<double>(p.node_gone.count()) + 5;
    case fault_kind::unschedulable:
      return 25;
    case fault_kind::namespace_delete:
      return 40;
    case fault_kind::github_5xx:
      return 20;
    case fault_kind::rate_limit_403:
    case fault_kind::rate_limit_429:
      return 20;
    case fault_kind::latency:
      return 20;
    case fault_kind::token_expiry:
    case fault_kind::session_expiry:
      return 2;
    case fault_kind::session_conflict:
      return 15;
    case fault_kind::duplicate_delivery:
    case fault_kind::reorder_delivery:
    case fault_kind::lost_delivery:
      return 10;
  }
  return 5;
}

profile make_profile(const std::string& name, std::chrono::seconds duration) {
  profile p;
  p.name = name;
  if (name == "short") {
    p.duration = duration.count() > 0 ? duration : std::chrono::seconds(160);
    p.jobs_per_second = 0.4;
    p.long_max = std::chrono::seconds(25);
    p.drain = std::chrono::seconds(120);
    p.node_gone = std::chrono::seconds(42);  // just past pod GC's 40 s quarantine
    // One of each but the 30 s outage of both replicas (soak only: it alone
    // would take a quarter of this profile).
    for (auto k : all_fault_kinds()) p.faults[k] = 1;
    p.faults[fault_kind::both_down] = 0;
    p.faults[fault_kind::leader_kill] = 2;
    return p;
  }
  if (name == "soak") {
    p.duration = duration.count() > 0 ? duration : std::chrono::seconds(3600);
    p.jobs_per_second = 0.5;
    p.long_max = std::chrono::seconds(90);
    p.drain = std::chrono::seconds(240);
    p.node_gone = std::chrono::seconds(70);  // pod GC (every 20 s, 40 s quarantine) takes its pods
    // Per hour; the brief's counts (20 leader kills, 5 apiserver restarts).
    const std::map<fault_kind, int> per_hour = {
        {fault_kind::leader_kill, 20},
        {fault_kind::rollout, 4},
        {fault_kind::both_down, 3},
        {fault_kind::apiserver_restart, 5},
        {fault_kind::etcd_compaction, 5},
        {fault_kind::watch_cut, 8},
        {fault_kind::evict_busy, 6},
        {fault_kind::evict_idle, 6},
        {fault_kind::node_recreate, 3},
        {fault_kind::unschedulable, 4},
        {fault_kind::namespace_delete, 3},
        {fault_kind::github_5xx, 6},
        {fault_kind::rate_limit_403, 3},
        {fault_kind::rate_limit_429, 3},
        {fault_kind::latency, 4},
        {fault_kind::token_expiry, 6},
        {fault_kind::session_expiry, 4},
        {fault_kind::session_conflict, 4},
        {fault_kind::duplicate_delivery, 6},
        {fault_kind::reorder_delivery, 6},
        {fault_kind::lost_delivery, 4},
    };
    double hours = static_cast<double>(p.duration.count()) / 3600.0;
    for (const auto& [k, n] : per_hour) p.faults[k] = std::max(1, static_cast<int>(std::lround(n * hours)));
    return p;
  }
  throw std::invalid_argument("unknown profile '" + name + "' (short, soak)");
}

std::vector<planned_fault> make_schedule(const profile& p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<planned_fault> out;
  const double total = static_cast<double>(p.duration.count());
  for (std::string_view lane : {"manager", "kube", "github"}) {
    std::vector<fault_kind> kinds;
    for (const auto& [k, n] : p.faults)
      if (lane_of(k) == lane)
        for (int i = 0; i < n; ++i) kinds.push_back(k);
    std::shuffle(kinds.begin(), kinds.end(), rng);
    double busy = 0;
    for (auto k : kinds) busy += expected_seconds(k, p);
    // The lane's idle time, spread as random gaps before each fault (the
    // first one after a 10 s warm-up under load).
    double idle = std::max(0.0, total - 10 - busy);
    std::vector<double> weights;
    std::uniform_real_distribution<double> u(0.2, 1.0);
    double sum = 0;
    for (std::size_t i = 0; i <= kinds.size(); ++i) sum += weights.emplace_back(u(rng));
    double t = 10;
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      t += idle * weights[i] / sum;
      out.push_back({std::round(t * 10) / 10, kinds[i], static_cast<std::uint32_t>(rng())});
      t += expected_seconds(kinds[i], p);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.at < b.at; });
  return out;
}

std::string describe(const std::vector<planned_fault>& schedule, const profile& p, std::uint64_t seed) {
  std::string out = "schedule: profile " + p.name + ", seed " + std::to_string(seed) + ", " +
                    std::to_string(p.duration.count()) + " s of load at " +
                    std::to_string(p.jobs_per_second) + " jobs/s, " + std::to_string(schedule.size()) +
                    " faults (replay: --profile " + p.name + " --duration " +
                    std::to_string(p.duration.count()) + " --seed " + std::to_string(seed) + ")\n";
  char line[160];
  for (const auto& f : schedule) {
    std::snprintf(line, sizeof line, "  t=%7.1fs  %-8s %-22s pick=%u\n", f.at,
                  std::string(lane_of(f.kind)).c_str(), std::string(to_string(f.kind)).c_str(), f.pick);
    out += line;
  }
  return out;
}

}  // namespace octorun::chaos
