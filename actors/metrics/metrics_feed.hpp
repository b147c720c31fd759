// Feeds the state metrics (state_metrics.hpp) from the watched objects,
// level-triggered: the controller forwards its RunnerSet and Runner informer
// events (watched::runnerset_event / runner_event, decoded once by the
// informers) to the feed actor, which keeps the latest
// view of each object in a state_store and publishes a fresh snapshot to the
// collector a moment after a burst of changes (scrapes never wait on it).
//
// Per-variant counts (desired, starting, idle, running, failed, assigned
// jobs) are what the RunnerSet's status says, min/max and replicas come from
// its spec: the status is the one place they are computed.
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <map>
#include <memory>

#include "actors/metrics/state_metrics.hpp"
#include "actors/watched.hpp"
#include "model/types.hpp"

namespace octorun::metrics {

// What one Runner contributes (pure).
runner_record runner_record_of(const model::runner& r);
// What one RunnerSet contributes: one entry per effective variant (and per
// retired variant its status still lists) with its status counts, min and
// max (pure).
runnerset_record runnerset_record_of(const model::runnerset& s);

// The latest Runners and RunnerSets, from informer events.
class state_store {
 public:
  // Applies one event for a Runner or RunnerSet; false when it changed
  // nothing the metrics show (the deletion of an unknown object).
  bool apply(const watched::runner_event& ev);
  bool apply(const watched::runnerset_event& ev);
  // The snapshot to publish.
  state_snapshot snapshot() const;

 private:
  std::map<object_key, runner_record> runners_;
  std::map<object_key, runnerset_record> sets_;
};

struct metrics_feed_options {
  // How long after the first of a burst of changes the snapshot is published.
  std::chrono::milliseconds coalesce{200};
};

// The feed actor: its interface is watched::observer (RunnerSet and Runner
// events). Stop it with caf::anon_send_exit.
watched::observer spawn_metrics_feed(caf::actor_system& sys, std::shared_ptr<state_collector> collector,
                                     metrics_feed_options options = {});

}  // namespace octorun::metrics
