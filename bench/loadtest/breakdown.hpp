// Where each job's time and money went: its wait from queued to started
// split into phases, and the idle node-seconds of the nodes the run used.
// Pure: timestamps in (wall-clock unix milliseconds, 0 for "not seen"), the
// figures out, so the rules are tested over synthetic records.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/common/lifecycle.hpp"
#include "bench/common/stats.hpp"

namespace octorun::loadtest {

// What the tool's watch saw of one runner pod: when it first saw each step.
struct pod_marks {
  double created = 0;        // the pod appeared
  double scheduled = 0;      // PodScheduled=True
  double sandbox_ready = 0;  // PodReadyToStartContainers=True (the kwok stage's "Pulling")
  double images_pulled = 0;  // octorun.io/ImagesPulled=True (the kwok stage's "Pulled")
  double running = 0;        // a container in state running
  double deleted = 0;
  std::string node;  // spec.nodeName once bound
  std::string pull;  // ImagesPulled's reason: "cold" or "cached" (the kwok stage that pulled)
};

// One pod's marks with the Runner watch's sightings of the same steps
// (bench::runner_times: the pod appeared, bound, Running) where that watch
// saw them first. Two watches see one update at slightly different times,
// and the runner process comes online off the Runner watch's sighting: a
// later sighting by the pod watch would put "running" after "online".
pod_marks earliest_sightings(pod_marks pod, const bench::runner_times& runner);

// What the tool's watch saw of one node.
struct node_marks {
  double created = 0;  // first seen (the start of the watch for a node that existed before)
  double ready = 0;    // Ready=True first seen
  double deleted = 0;
};

// The phases of queued -> job started, in order. node_provisioning lies
// inside scheduling (a pod that waited for a node is scheduled once it is
// Ready); the others follow one another and add up to the whole wait.
enum class phase {
  manager,            // job queued -> its runner pod created
  scheduling,         // pod created -> PodScheduled=True
  node_provisioning,  // pod created -> its node Ready, for a node that appeared after the pod; else 0
  sandbox,            // scheduled -> sandbox ready
  image_pull,         // sandbox ready -> images pulled
  container_start,    // images pulled -> container running
  runner_start,       // container running -> runner online (the runner process the tool plays)
  assignment,         // runner online -> job started
};
inline constexpr std::size_t phase_count = 8;
std::string_view phase_name(phase p);  // "manager", "node_provisioning", ...

// Seconds per phase; nullopt: not measured (a timestamp missing, or out of
// order beyond the simulator's whole-millisecond stamps).
using job_phases = std::array<std::optional<double>, phase_count>;

// One job's phases. `pod` and `node` may be null (never seen);
// `runner_online_ms` is when the tool brought its runner online (0: never).
job_phases phases_of(const bench::sim_job_record& job, const pod_marks* pod, const node_marks* node,
                     double runner_online_ms);

struct phase_stats {
  std::size_t measured = 0, unmeasured = 0;
  double p50 = 0, p95 = 0, p99 = 0;  // over the measured ones; 0 when none
};
std::array<phase_stats, phase_count> phase_statistics(const std::vector<job_phases>& jobs);

// When a node held a busy runner (its job started -> completed).
struct busy_span {
  std::string node;
  double from_ms = 0, to_ms = 0;
};

// Seconds within [from_ms, to_ms] that each node existed with no busy runner
// on it, summed over the nodes. A node not yet deleted exists until to_ms.
double idle_node_seconds(const std::map<std::string, node_marks>& nodes, const std::vector<busy_span>& busy,
                         double from_ms, double to_ms);

// Runner-seconds by the state the tool's Runner watch saw them in
// (bench::runner_counts), from its samples: (seconds since the first job
// was queued, the counts then), ascending, each count holding until the
// next sample. Summed per window of `width` seconds from 0; what comes
// after the last window counts in it. Where a run's idle runner-seconds
// went: starting (before the pod runs), idle (online, no job) or ending.
struct state_seconds {
  double starting = 0, idle = 0, busy = 0;
  double ending = 0;  // finished, or being deleted
};
std::vector<state_seconds> runner_seconds_by_window(
    const std::vector<std::pair<double, bench::runner_counts>>& samples, double width, std::size_t windows);

}  // namespace octorun::loadtest
