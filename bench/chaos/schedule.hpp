// The chaos harness's plan, as pure data: the profiles (how long, how much
// load, how many faults of each kind), the fault kinds, and the schedule a
// seed makes of them. The same profile and seed always give the same
// schedule (the printed one); what each fault hits when it fires (which
// pod, which replica) is chosen from the fault's own random parameter.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace octorun::chaos {

enum class fault_kind {
  // The manager (lane "manager").
  leader_kill,  // kill -9 the leading replica; it restarts after a few seconds
  rollout,      // SIGTERM rollout: each replica replaced by a new one, one at a time
  both_down,    // both replicas killed; restarted 30 s later while jobs keep coming
  // Kubernetes (lane "kube").
  apiserver_restart,  // kill -9 kube-apiserver, start it again
  etcd_compaction,    // compact etcd, then cut the managers' connections: watches resume into 410
  watch_cut,          // cut the managers' apiserver connections for a moment
  evict_busy,         // Eviction API on a pod whose runner runs a job
  evict_idle,         // ... on a pod whose runner is idle
  node_recreate,      // delete the kwok node, re-create it after longer than pod GC waits
  unschedulable,      // taint the node NoSchedule: new runner pods stay Pending for a while
  namespace_delete,   // delete the namespace of one RunnerSet with its runners; re-create it
  // GitHub (lane "github").
  github_5xx,          // every GitHub endpoint answers 503 for a while
  rate_limit_403,      // primary rate limit: 403, x-ratelimit-remaining 0, reset later
  rate_limit_429,      // secondary rate limit: 429 with Retry-After
  latency,             // every GitHub call takes 2 s longer
  token_expiry,        // installation and message-queue tokens expire now
  session_expiry,      // the service drops every message session
  session_conflict,    // sessions dropped, and the next creates answer 409
  duplicate_delivery,  // the next webhook deliveries are sent twice
  reorder_delivery,    // the next pairs of deliveries are swapped
  lost_delivery,       // the next delivery is lost outright
};

std::string_view to_string(fault_kind k);
std::string_view lane_of(fault_kind k);  // "manager", "kube" or "github"
std::vector<fault_kind> all_fault_kinds();

struct profile {
  std::string name;
  std::chrono::seconds duration{};  // load and faults
  double jobs_per_second = 0.5;
  double cancel_fraction = 0.1;
  // Job run times: this share short (0.5-3 s), medium (3-15 s), the rest long (15 s to long_max).
  double short_share = 0.5, medium_share = 0.35;
  std::chrono::seconds long_max{60};
  std::map<fault_kind, int> faults;  // how many of each
  std::chrono::seconds drain{180};   // after the load: jobs still to finish
  std::chrono::seconds node_gone{45};
  std::chrono::seconds both_down{30};
};

// "short" (the ctest profile, under 5 minutes), "soak" (the hour-long run;
// counts scale with `duration`).
profile make_profile(const std::string& name, std::chrono::seconds duration = {});

struct planned_fault {
  double at = 0;  // seconds from the start of the load
  fault_kind kind{};
  std::uint32_t pick = 0;  // chooses the target when it fires
};

// Faults of one lane never overlap (each waits for the one before); the
// lanes run side by side. Sorted by time.
std::vector<planned_fault> make_schedule(const profile& p, std::uint64_t seed);

// How long a fault of this kind usually keeps its lane busy (for spacing).
double expected_seconds(fault_kind k, const profile& p);

std::string describe(const std::vector<planned_fault>& schedule, const profile& p, std::uint64_t seed);

}  // namespace octorun::chaos
