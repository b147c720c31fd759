// The scale-set listener: one per GitHub scale set (one per variant of a
// RunnerSet whose intake is Listener), under a supervisor its RunnerSet
// actor owns, so one failing session restarts with capped, jittered backoff
// and never stops its siblings.
//
// An incarnation asks its RunnerSet for the scale set and credentials
// (listener_setup), opens the message session on its own scale-set worker
// (a detached actor: the long poll blocks only that thread), then loops:
// long-poll a message, acquire the jobs it offers (JobAvailable), hand every
// job message and the statistics to the RunnerSet, acknowledge, poll again.
// Any failure (a 409 because another listener holds the session, a 5xx, an
// expired session the client could not refresh) ends the incarnation with
// the error; the supervisor starts a fresh one. Whatever ends it, the
// session is deleted so a successor can open one.
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "actors/metrics/recorder.hpp"
#include "actors/protocols.hpp"

namespace octorun::listener {

struct listener_config {
  std::string set_id;   // "namespace/name": its session messages name it as their runner_set
  std::string variant;  // the key under the supervisor; "" for a set without variants
  protocols::listener_setup_api runnerset;
  // Receives the job messages and statistics: its RunnerSet's actor (the
  // session belongs to that set, so nothing routes them: one mailbox).
  protocols::job_router jobs;
  std::chrono::milliseconds request_timeout{30'000};
  // Told when the session opens and ends, and when an incarnation fails.
  std::shared_ptr<metrics::recorder> metrics;
};

// The listener's own interface is empty: it handles nothing but the replies
// to its requests, and CAF 0.17 rejects an empty typed_actor ("Empty typed
// actor handle"), so its handle stays a caf::actor. What it sends is typed:
// its RunnerSet, as listener_setup_api and as job_router.
caf::actor spawn_listener(caf::local_actor* parent, listener_config cfg);

}  // namespace octorun::listener
