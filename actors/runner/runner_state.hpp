// Internal to the Runner actor (runner_actor.cpp, job_path.cpp and
// runner_github.cpp): its state and the steps these files share.
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "actors/flight_registry.hpp"
#include "actors/reconcile_turn.hpp"
#include "actors/runner/events.hpp"
#include "actors/runner/observe.hpp"
#include "actors/runner/runner_actor.hpp"
#include "actors/watched.hpp"
#include "adapters/kube/api.hpp"
#include "common/json_writer.hpp"
#include "messages/jobs.hpp"
#include "model/types.hpp"

namespace octorun::runner::detail {

using wake_atom = caf::atom_constant<caf::atom("rwake")>;
using resync_atom = caf::atom_constant<caf::atom("rresync")>;
// Decides once the messages already queued are handled (mark_dirty).
using reconcile_atom = caf::atom_constant<caf::atom("rrecon")>;
using time_point = std::chrono::steady_clock::time_point;

using job_event = std::variant<messages::job_started, messages::job_completed>;

// What the actor has in flight: a step's request (or chain of requests:
// next_step's one thing at a time) and the job path's read or write.
enum class flight { step, job };

struct runner_state {
  runner_actor_config cfg;
  // The Runner and its Pod as the watches or this actor's own writes last
  // showed them (decoded once, shared with the informers' caches), its JIT
  // Secret as this actor last read or created it; null while there is none.
  watched::runner_ptr runner;
  watched::pod_ptr pod;
  watched::secret_ptr secret;
  // Its latest pod, kept after the pod is gone: when it was scheduled,
  // started and ready, and what it requested, for the Runner's end.
  watched::pod_ptr last_pod;
  bool end_recorded = false;  // recorder::runner_gone was called
  // Secrets are not watched: the JIT Secret is read by name before the
  // actor's first decision (secret_read; not for a Runner its set has just
  // made, made_here_atom) and again before a pod is made anew
  // (secret_checked: read or created since the last pod was made), so a
  // Secret deleted meanwhile is registered again, never mounted missing.
  bool secret_read = false;
  bool secret_checked = false;
  actor_memory memory;
  // What is in flight (flight), since when: one step's requests, one job
  // write, each at most once; the resync takes one past cfg.lost_after as lost.
  flight_registry<flight> in_flight;
  // The job path, one at a time, in order (a vector: an empty std::deque
  // allocates a block up front, in every Runner's actor).
  std::vector<job_event> jobs;
  bool job_read_fresh = false;  // the job at the front is decided on a server read (after a conflict)
  int consecutive_errors = 0;
  bool jit_conflict_retried = false;  // the pending JIT request follows a delete-and-retry
  std::uint64_t wake_generation = 0;
  // Its set's word on reading the namespace, looked at again at
  // unreadable_recheck_at, less often each time (runner_actor_config::
  // namespace_readable).
  int unreadable_waits = 0;
  time_point unreadable_recheck_at{};
  reconcile_turn dirty;  // a decision is due (one reconcile_atom is queued)
  static constexpr const char* name = "runner";
};

// The interface plus the actor's own timers.
using runner_impl =
    runner_actor::extend<caf::reacts_to<resync_atom>, caf::reacts_to<wake_atom, std::uint64_t>,
                         caf::reacts_to<reconcile_atom>>;
using self_ptr = runner_impl::stateful_pointer<runner_state>;

std::string id(self_ptr self);
// What the actor knows changed: one reconcile runs once the messages already
// queued are handled (reconcile_turn), however many handlers marked it.
void mark_dirty(self_ptr self);
// Records `what` in flight as `f`, since now; returns the ticket its replies
// carry. A reply is heeded only while awaited (its entry not taken as lost
// since, give_up_lost); land clears the entry once the step or write is done.
std::uint64_t send_off(self_ptr self, flight f, std::string what);
bool awaited(self_ptr self, flight f, std::uint64_t ticket);
void land(self_ptr self, flight f);
// The actor's clock (CAF's, which the deterministic test scheduler drives):
// every wait and every "since" the actor keeps is read from it.
time_point now(self_ptr self);
// The wall clock the config passes in, in seconds since the epoch.
std::int64_t wall_now(self_ptr self);
// observe() -> next_step() -> execute(): run only by the reconcile_atom
// mark_dirty queued.
void reconcile(self_ptr self);
std::chrono::milliseconds backoff(self_ptr self);
// Keeps `runner` (a write's reply, decoded) unless it is null.
void set_runner(self_ptr self, watched::runner_ptr runner);
void record_event(self_ptr self, const runner_event& e, const model::runner& runner);
// Opens a merge patch of the Runner: {"metadata":{"resourceVersion":rv}
// (the optimistic lock every Runner write carries), then "status":{...}
// open for the caller's members; close both with two close().
void open_status_patch(json::writer& w, std::string_view resource_version);
// Times of status.timeline, as (member, epoch seconds); 0: not known (left out).
using timeline_times = std::vector<std::pair<const char*, std::int64_t>>;
// Writes status.timeline with `times` (nothing when none is known).
void write_timeline(json::writer& w, const timeline_times& times);
// Writes podReady, the Registered and PodReady conditions (conditions.hpp),
// the pod's way up (status.timeline, `more` times after it) and the GitHub
// registration (runnerId, runnerName: the JIT Secret's) into a status patch
// of `runner`.
void write_readiness(self_ptr self, json::writer& w, const model::runner& runner, bool pod_ready,
                     const timeline_times& more = {});
// The Runner is gone (its deletion watched, or a write found it so): records
// its timeline and cost once, from `last`, the Runner as last seen.
void record_end(self_ptr self, const model::runner& last);
// Wakes reconcile at `at`; a later wake replaces an earlier one.
void wake_at(self_ptr self, time_point at);
// Sends `req` to the request pool. No CAF timeout: the pool answers every
// request it takes (the result, or an error unsent once it queued past the
// actors' request_timeout: kube::spawn_request_pool; each exchange is
// bounded by the client's own timeout), and CAF 0.17 keeps a request's
// timeout, with a reference to this actor, in the system's clock until it
// expires, answered or not: entries pile up per Runner for the whole
// timeout after a burst (the figures: bench/manager/README.md).
template <class Request>
auto ask_kube(self_ptr self, Request req) {
  req.set = self->state.cfg.set;  // its set's turn in the pool
  return self->request(self->state.cfg.kube, caf::infinite, std::move(req));
}
// A step's Kubernetes request failed (a conflict reads the Runner again) or
// got no answer: backs off and reconciles again.
void on_api_error(self_ptr self, const char* what, const kube::api_error& e);
void on_actor_error(self_ptr self, const char* what, const caf::error& e);
// A create of the Runner's pod or Secret found the name taken by a child this
// actor does not hold: looks again after a backoff.
void create_conflict(self_ptr self, const char* what);

// ---- the GitHub side (runner_github.cpp), the steps execute() takes for
// next_step's provision, store_secret, find_on_github, remove_from_github and
// defer_removal.
void provision(self_ptr self);
void store_secret(self_ptr self);
void find_on_github(self_ptr self);
void remove_from_github(self_ptr self, std::int64_t runner_id);
void defer_removal(self_ptr self, std::int64_t runner_id);

// ---- the job path (job_path.cpp): one job message at a time, decided on the
// Runner as just read, written resourceVersion-locked.
void process_jobs(self_ptr self);

}  // namespace octorun::runner::detail
