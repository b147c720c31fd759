// A job's way through the system and what its runner cost: the points in
// time of a Runner and of the job it ran (status.timeline, crds/README.md),
// the phases between them as the manager's metrics count them, and the
// runner-seconds it was busy and idle (docs/monitoring.md, "Job timeline"
// and "Cost"). Pure: the caller passes the time it observed.
//
// The points come from two clocks: GitHub's (queued, started, completed:
// the webhook's created_at/started_at/completed_at, the scale set's
// queueTime/runnerAssignTime/finishTime) and the cluster's (the apiserver's,
// the scheduler's and the kubelet's timestamps, the manager's own). A point
// may be missing, in the future, absurdly old, or out of order; those phases
// are left out and counted by reason, never measured as a negative or absurd
// duration.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

namespace octorun::model {

// Seconds since the epoch. nullopt: the point was not reached (or is not
// known here); a value <= 0: reached, but its source gave no time (a job
// message without the timestamp).
using time_point_seconds = std::optional<std::int64_t>;

struct job_timeline {
  time_point_seconds queued;              // GitHub queued the job
  time_point_seconds created;             // the Runner's metadata.creationTimestamp
  time_point_seconds pod_scheduled;       // the pod's PodScheduled condition became True
  time_point_seconds containers_started;  // the runner container's startedAt (its image pulled)
  time_point_seconds online;              // the pod's Ready condition became True (the runner listens)
  time_point_seconds started;             // GitHub: a runner of the set picked the job up
  time_point_seconds completed;           // GitHub: the job ended
  time_point_seconds gone;                // the manager released the Runner's finalizer
  bool operator==(const job_timeline&) const = default;
};

// The phases, each named after the point it ends at (docs/monitoring.md has
// the table of their start and end points and which intake sees them).
enum class job_phase {
  runner_created,      // queued -> created: only for a Runner created after the job was queued
  pod_scheduled,       // created -> pod_scheduled
  containers_started,  // pod_scheduled -> containers_started
  runner_online,       // containers_started -> online
  job_started,         // queued -> started (GitHub's queue time)
  job_completed,       // started -> completed
  runner_gone,         // completed -> gone
};
std::string_view to_string(job_phase p);

// Why a phase was not measured as its points say.
enum class timestamp_problem {
  missing,    // a point the source should have given is absent (the job started, without its start time)
  future,     // a point later than now (beyond the skew tolerance)
  far_past,   // a point older than max_age before now
  reordered,  // the phase ends before it starts (beyond the skew tolerance between two clocks)
  skewed,     // it ends before it starts by less than the skew tolerance between two clocks: measured as 0
};
std::string_view to_string(timestamp_problem p);

struct timeline_limits {
  // How far GitHub's clock and the cluster's may disagree: a point up to
  // this much in the future counts as now, and a phase across the two clocks
  // that ends up to this much before it starts counts as 0 s.
  std::int64_t skew_tolerance = 60;
  // Older than this before now, a point is not believed: GitHub queues a job
  // for at most a day and runs it on a self-hosted runner for at most five.
  std::int64_t max_age = 7 * 24 * 3600;
};

struct phase_sample {
  job_phase phase;
  std::int64_t seconds;  // >= 0
  bool operator==(const phase_sample&) const = default;
};

struct phase_drop {
  job_phase phase;
  timestamp_problem problem;
  bool operator==(const phase_drop&) const = default;
};

struct phase_measurement {
  std::vector<phase_sample> samples;
  std::vector<phase_drop> drops;  // `skewed` ones also have their sample of 0
};

// Measures `phases` of `t` at `now`. A phase whose points are not both
// reached (nullopt) is left out silently: the job or runner did not get
// there. A reached point without a time is `missing`; then, per point,
// `far_past` and `future`; then the order. runner_created is measured only
// for a Runner created after its job was queued (a runner that waited for
// the job, warm, has no such phase: not bad input).
phase_measurement measure(const job_timeline& t, std::initializer_list<job_phase> phases, std::int64_t now,
                          const timeline_limits& limits = {});

// The phases measured when a Runner is gone: everything that is not a job
// message's (job_started at the start, job_completed at the completion).
inline constexpr std::initializer_list<job_phase> phases_at_runner_end = {
    job_phase::runner_created, job_phase::pod_scheduled, job_phase::containers_started,
    job_phase::runner_online, job_phase::runner_gone};

// The runner-seconds a Runner spent, from its pod's scheduling (when its
// requests were reserved; its creation when no pod was scheduled) to `end`
// (when it was gone): busy from its job's start to the job's end (or `end`),
// idle the rest. A start or end of the job that cannot be trusted (the rules
// of measure) leaves that part idle; a negative span counts 0.
struct runner_usage {
  std::int64_t busy_seconds = 0;
  std::int64_t idle_seconds = 0;
  bool operator==(const runner_usage&) const = default;
};
runner_usage usage_of(const job_timeline& t, std::int64_t end, const timeline_limits& limits = {});

// A repository name as a label value: "owner/name" of GitHub's characters
// (letters, digits, '-', '_', '.'; at most 39 + 100 of them); "" for none;
// "invalid" for anything else, so a message cannot put arbitrary text in a label.
std::string_view repository_label(std::string_view repository);

}  // namespace octorun::model
