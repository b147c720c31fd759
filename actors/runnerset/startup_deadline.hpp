// How long a variant's runner may take from its creation to coming online
// before it counts as a stuck start (stuck_start.hpp replaces it). Set in
// the spec (spec.startupTimeoutSeconds, a variant's own), else derived from
// the start-ups the set observed: a multiple of their recent 95th
// percentile, between a floor and a ceiling. Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

#include "model/start_time.hpp"

namespace octorun::runnerset {

// The rule a derived deadline follows.
struct startup_rule {
  // A start-up this many times the recent p95 is an outlier: a node that
  // never came, an image pull stuck, a runner process that hangs.
  std::int64_t multiple = 3;
  // Never shorter: on a warm cluster the p95 is seconds, and three of them
  // would replace runners that are only a little slow (each replacement
  // costs a pod and a registration).
  std::chrono::seconds floor{60};
  // Never longer: GitHub takes an assignment no runner took back after five
  // minutes (test/simulator/README.md, "Reassignment"); a start slower than
  // that has lost its job's assignment anyway.
  std::chrono::seconds ceiling{300};
  // Below this many observations the p95 says little: the ceiling holds.
  std::size_t min_samples = 5;
  // The observations kept per variant, the newest: the rule follows the
  // cluster as it changes (nodes warm up, images get cached).
  std::size_t window = 50;
};

// A variant's recent start-up times (creation to online), oldest first.
struct startup_samples {
  std::deque<std::int64_t> seconds;
  std::deque<std::chrono::steady_clock::time_point> heard;  // when each was noted (the set's clock)
  // Of each, the seconds its pod waited for a node (creation to scheduled,
  // when that was a wait for a node; else 0).
  std::deque<std::int64_t> node_waits;
  // Adds one, dropping the oldest beyond `rule.window`. A negative one (the
  // clocks that stamped it disagree) counts as 0.
  void add(std::int64_t s, const startup_rule& rule = {}, std::chrono::steady_clock::time_point at = {},
           std::int64_t node_wait = 0);
  // Those noted after `since`, oldest first; `net_of_node_waits`: each less
  // its pod's wait for a node.
  std::deque<std::int64_t> since(std::chrono::steady_clock::time_point since,
                                 bool net_of_node_waits = false) const;
  // Replaces the newest sample of `was` noted `at` by `s` (false: none is
  // kept any more).
  bool replace(std::chrono::steady_clock::time_point at, std::int64_t was, std::int64_t s);
};

// The nearest-rank 95th percentile (nullopt: none), as start-time targets take it.
using model::p95;

struct startup_deadline {
  std::chrono::seconds value{};
  bool derived = false;     // from observations (or the ceiling while too few), not the spec
  std::size_t samples = 0;  // the observations it was derived from
};

// `set`: the variant's spec.startupTimeoutSeconds (its own, else the set's).
startup_deadline startup_deadline_for(const std::optional<std::int32_t>& set, const startup_samples& observed,
                                      const startup_rule& rule = {});

}  // namespace octorun::runnerset
