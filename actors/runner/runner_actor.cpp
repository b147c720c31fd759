#include "actors/runner/runner_actor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <optional>
#include <variant>

#include "actors/kinds.hpp"
#include "actors/runner/children.hpp"
#include "actors/runner/conditions.hpp"
#include "actors/runner/events.hpp"
#include "actors/runner/jit_conflict.hpp"
#include "actors/runner/observe.hpp"
#include "actors/runner/runner_state.hpp"
#include "adapters/kube/finalizers.hpp"
#include "adapters/kube/protocol.hpp"
#include "common/backoff.hpp"
#include "common/json_writer.hpp"
#include "common/rfc3339.hpp"
#include "messages/jobs.hpp"
#include "model/naming.hpp"
#include "model/parse.hpp"

namespace octorun::runner::detail {

std::string id(self_ptr self) { return self->state.cfg.ns + "/" + self->state.cfg.name; }

time_point now(self_ptr self) { return self->clock().now(); }

std::int64_t wall_now(self_ptr self) { return self->state.cfg.wall_clock(); }

std::uint64_t send_off(self_ptr self, flight f, std::string what) {
  return self->state.in_flight.insert(f, std::move(what), now(self));
}

bool awaited(self_ptr self, flight f, std::uint64_t ticket) { return self->state.in_flight.holds(f, ticket); }

void land(self_ptr self, flight f) { self->state.in_flight.erase(f); }

// The timeout path: a request in flight past lost_after gets no answer any
// more (the request pool answers, or drops, what it takes within
// request_timeout, each exchange bounded by the client's own timeout; a
// GitHub request times out at request_timeout). It is taken as lost, its
// late reply (if one ever comes) is not heeded, and the decision runs again.
void give_up_lost(self_ptr self) {
  auto& st = self->state;
  for (auto& [f, e] : st.in_flight.take_lost(now(self), st.cfg.lost_after)) {
    spdlog::warn("runner {}: {} got no answer in {} s; taken as lost, deciding again", id(self), e.note,
                 std::chrono::duration_cast<std::chrono::seconds>(now(self) - e.since).count());
    // The job at the front is decided again on the Runner as the server has it.
    if (f == flight::job) st.job_read_fresh = true;
    mark_dirty(self);
  }
}

std::chrono::milliseconds backoff(self_ptr self) {
  auto& st = self->state;
  return exponential_backoff<std::chrono::milliseconds>{st.cfg.retry_initial, st.cfg.retry_max}.delay(
      std::min(st.consecutive_errors, 16));
}

// Wakes reconcile at `at`; a later wake replaces an earlier one.
void wake_at(self_ptr self, time_point at) {
  auto gen = ++self->state.wake_generation;
  auto delay = std::max(at - now(self), time_point::duration::zero());
  self->delayed_send(self, delay, wake_atom::value, gen);
}

// Children named after the Runner but owned by another (owned_by): an
// earlier Runner's of the same name, on their way out. Not kept: their pod's
// state is not this Runner's, nor their JIT configuration; its own pod and
// Secret are made once they are gone (create_conflict).
void drop_strangers(runner_state& st) {
  if (!st.runner) return;  // judged once the Runner is known
  if (st.pod && !model::owned_by(st.pod->metadata, st.runner->metadata.uid)) st.pod = nullptr;
  if (st.secret && !model::owned_by(st.secret->metadata, st.runner->metadata.uid)) st.secret = nullptr;
}

void set_runner(self_ptr self, watched::runner_ptr runner) {
  // Null: unreadable (logged by the decoder; the CRD schema and the webhook
  // keep this from happening): never act on it.
  if (!runner) return;
  self->state.runner = std::move(runner);
  drop_strangers(self->state);
}

// A Pod event: the slot holds the Runner's own pod or nothing.
template <class Ptr>
void set_child(self_ptr self, Ptr runner_state::*slot, kube::informer_update<Ptr>& ev) {
  auto& st = self->state;
  st.*slot = ev.type == kube::event_type::deleted ? nullptr : std::move(ev.obj);
  drop_strangers(st);
  if constexpr (std::is_same_v<Ptr, watched::pod_ptr>)
    if (st.pod) st.last_pod = st.pod;
}

// Reads the Runner's JIT Secret from the server (runner_state::secret_read
// says when), keeping it if it is the Runner's own, then decides again.
void read_own_secret(self_ptr self) {
  auto& st = self->state;
  const auto ticket = send_off(self, flight::step, "reading the JIT Secret");
  ask_kube(self, kube::get_request{kinds::secrets(), st.cfg.ns, model::jit_secret_name(st.cfg.name), ""})
      .then(
          [=](kube::object_result& r) {
            if (!awaited(self, flight::step, ticket)) return;
            auto& s = self->state;
            if (!r && !r.error().not_found()) return on_api_error(self, "reading the JIT Secret", r.error());
            land(self, flight::step);
            s.secret = r ? watched::read_secret(*r) : nullptr;
            s.secret_read = s.secret_checked = true;
            drop_strangers(s);
            mark_dirty(self);
          },
          [=](caf::error& e) {
            if (awaited(self, flight::step, ticket)) on_actor_error(self, "reading the JIT Secret", e);
          });
}

// A create answered AlreadyExists while this actor holds no such child: made
// by an attempt whose answer was lost (the watch, or for a Secret the read
// that follows, brings it), or an earlier Runner's of this name that the
// garbage collector has not removed yet. Looked at again after a backoff,
// not at once: asked again at once, the server gives the same answer.
void create_conflict(self_ptr self, const char* what) {
  auto& st = self->state;
  land(self, flight::step);
  ++st.consecutive_errors;
  spdlog::info(
      "runner {}: {}: the name is taken (by an earlier Runner's child on its way out, or by an "
      "attempt whose answer was lost); looking again in {} ms",
      id(self), what, backoff(self).count());
  wake_at(self, now(self) + backoff(self));
}

// A write failed: decide how soon to look again.
void on_api_error(self_ptr self, const char* what, const kube::api_error& e) {
  auto& st = self->state;
  land(self, flight::step);
  if (e.conflict()) {
    // Someone wrote the Runner after the version we decided on: read it
    // again rather than wait for the watch, then decide afresh.
    const auto ticket = send_off(self, flight::step, "reading the Runner after a conflict");
    ask_kube(self, kube::get_request{kinds::runners(), st.cfg.ns, st.cfg.name, ""})
        .then(
            [=](kube::object_result& r) {
              if (!awaited(self, flight::step, ticket)) return;
              land(self, flight::step);
              if (r) set_runner(self, watched::read_runner(*r));
              if (!r && r.error().not_found()) {
                if (self->state.runner) record_end(self, *self->state.runner);
                return self->quit();
              }
              mark_dirty(self);
            },
            [=](caf::error&) {
              if (!awaited(self, flight::step, ticket)) return;
              land(self, flight::step);
              wake_at(self, now(self) + backoff(self));
            });
    return;
  }
  ++st.consecutive_errors;
  // A namespace being deleted refuses new pods and takes the Runner anyway.
  auto level = e.namespace_terminating ? spdlog::level::info
               : e.retryable()         ? spdlog::level::warn
                                       : spdlog::level::err;
  spdlog::log(level, "runner {}: {} failed: {}; retrying in {} ms", id(self), what, kube::to_string(e),
              backoff(self).count());
  wake_at(self, now(self) + std::max<std::chrono::milliseconds>(backoff(self), e.retry_after));
}

void on_actor_error(self_ptr self, const char* what, const caf::error& e) {
  auto& st = self->state;
  land(self, flight::step);
  ++st.consecutive_errors;
  spdlog::warn("runner {}: {} got no answer: {}", id(self), what, self->system().render(e));
  wake_at(self, now(self) + backoff(self));
}

// Records `e` regarding `runner`, the Runner as a write returned it (fire and
// forget; the recorder spam-limits).
void record_event(self_ptr self, const runner_event& e, const model::runner& runner) {
  auto& st = self->state;
  if (!st.cfg.events) return;
  if (!e.warning && !st.cfg.phase_events) return;  // --runner-phase-events=false: Warnings only
  kube::event_spec spec;
  spec.regarding = {model::api_version, "Runner", runner.metadata.namespace_, runner.metadata.name,
                    runner.metadata.uid};
  spec.type = e.warning ? "Warning" : "Normal";
  spec.reason = e.reason;
  spec.action = e.action;
  spec.note = e.note;
  caf::anon_send(st.cfg.events, std::move(spec));
}

// The typed value of a write's reply, read as the watch would read it.
watched::runner_ptr read_reply(const kube::object& o, const watched::runner_ptr&) {
  return watched::read_runner(o);
}
watched::pod_ptr read_reply(const kube::object& o, const watched::pod_ptr&) { return watched::read_pod(o); }

// Sends a write of the Runner or one of its children (`slot`: where the
// actor keeps it); on success records `event` (if any), keeps what the
// server returned (when the watch has not moved on meanwhile), notes in the
// actor's memory what the write established (`remember`, if any) and
// reconciles again.
template <class Request, class Value>
void write(self_ptr self, const char* what, Request req, std::shared_ptr<const Value> runner_state::*slot,
           std::optional<runner_event> event = std::nullopt, void (*remember)(actor_memory&) = nullptr) {
  auto& st = self->state;
  const auto ticket = send_off(self, flight::step, what);
  const auto& held = st.*slot;
  std::string based_on = held ? held->metadata.resource_version : std::string();
  constexpr bool is_runner = std::is_same_v<Value, model::runner>;
  ask_kube(self, std::move(req))
      .then(
          [=](kube::object_result& r) {
            if (!awaited(self, flight::step, ticket)) return;
            auto& s = self->state;
            land(self, flight::step);
            if (!r && r.error().already_exists() && !(s.*slot)) return create_conflict(self, what);
            if (!r && !r.error().not_found() && !r.error().already_exists())
              return on_api_error(self, what, r.error());
            s.consecutive_errors = 0;
            if (is_runner && !r && r.error().not_found()) {  // the Runner is gone
              if (s.runner) record_end(self, *s.runner);
              return self->quit();
            }
            if (r && remember) remember(s.memory);
            auto& kept = s.*slot;
            auto returned = r ? read_reply(*r, kept) : nullptr;
            if constexpr (is_runner) {
              // Its finalizer released, the Runner is gone: the set retires
              // this actor on its deletion, which it never sees.
              const auto& last = returned ? returned : s.runner;
              if (r && s.memory.finalizer_released && last) record_end(self, *last);
            }
            if (returned && event) {
              if constexpr (is_runner) record_event(self, *event, *returned);
            }
            const bool unchanged = kept ? kept->metadata.resource_version == based_on : based_on.empty();
            if (r && unchanged) {
              // A DELETE answered with a Status (no object) leaves nothing to keep.
              if (returned || !is_runner) kept = std::move(returned);
            } else if (!r && r.error().not_found() && !is_runner) {
              kept = nullptr;  // already gone
            }
            mark_dirty(self);
          },
          [=](caf::error& e) {
            if (awaited(self, flight::step, ticket)) on_actor_error(self, what, e);
          });
}

void open_status_patch(json::writer& w, std::string_view resource_version) {
  w.open().open("metadata").field("resourceVersion", resource_version).close().open("status");
}

// Added with the Runner's resourceVersion as the lock (a merge patch
// replaces the whole list).
void hold_finalizer(self_ptr self) {
  auto& st = self->state;
  const auto& meta = st.runner->metadata;
  write(
      self, "adding the finalizer",
      kube::patch_request{kinds::runners(), st.cfg.ns, st.cfg.name, kube::patch_type::merge,
                          kube::finalizer_patch(meta.finalizers, meta.resource_version, finalizer, true), ""},
      &runner_state::runner);
}

// Removed by a JSON patch that tests its entry, not the resourceVersion: the
// release of a runner that ran its job races the set's DELETE of it, which
// changes the version but not the list, and must not cost a conflict and a
// re-read. A list that did change fails the test (422): retried after a
// backoff on what the watch shows then. Once the server has answered, the
// release is remembered: the DELETE's watch event, older than the answer
// but maybe read after it, still lists the finalizer and must not send the
// release again.
void release_finalizer(self_ptr self) {
  auto& st = self->state;
  auto patch = kube::finalizer_removal_patch(st.runner->metadata.finalizers, finalizer);
  if (!patch) std::abort();  // next_step releases only a finalizer observe() saw in this list
  write(self, "removing the finalizer",
        kube::patch_request{kinds::runners(), st.cfg.ns, st.cfg.name, kube::patch_type::json,
                            std::move(*patch), ""},
        &runner_state::runner, std::nullopt, [](actor_memory& m) { m.finalizer_released = true; });
}

// Sends the status patch `w` holds (its status still open).
void patch_status(self_ptr self, const char* what, json::writer& w,
                  std::optional<runner_event> event = std::nullopt) {
  auto& st = self->state;
  write(self, what,
        kube::patch_request{kinds::runners(), st.cfg.ns, st.cfg.name, kube::patch_type::merge,
                            w.close().close().str(), "status"},
        &runner_state::runner, std::move(event));
}

void write_timeline(json::writer& w, const timeline_times& times) {
  if (std::none_of(times.begin(), times.end(), [](const auto& t) { return t.second > 0; })) return;
  w.open("timeline");
  for (const auto& [key, at] : times)
    if (at > 0) w.field(key, format_rfc3339(at));
  w.close();
}

void write_readiness(self_ptr self, json::writer& w, const model::runner& runner, bool pod_ready,
                     const timeline_times& more) {
  const auto& secret = self->state.secret;
  runner_condition_facts facts;
  facts.registered = runner.status.runner_id != 0 || (secret && secret->registration);
  facts.pod_ready = pod_ready;
  const auto pod = observe_pod(self->state.pod.get());
  facts.pod_failed = pod.runner_exited && pod.exit_code != 0;
  facts.registration_failure = self->state.memory.registration_failure;
  facts.name_taken = self->state.memory.name_taken;
  auto conditions = runner_conditions(runner.status.conditions, facts, format_rfc3339(wall_now(self)),
                                      runner.metadata.generation);
  w.field("podReady", pod_ready);
  model::write_conditions(w, "conditions", conditions);
  // The pod's way up rides along with its readiness: no write of its own.
  timeline_times way_up;
  if (const auto& pod = self->state.pod) {
    way_up = {{"podScheduled", pod->scheduled_at}, {"containersStarted", pod->runner_started_at}};
    if (pod->ready) way_up.emplace_back("online", pod->ready_at);
  }
  const bool created = !runner.metadata.creation_timestamp.empty();
  const bool with_way_up =
      created || std::any_of(way_up.begin(), way_up.end(), [](const auto& t) { return t.second > 0; });
  if (with_way_up) {
    w.open("timeline");
    if (created) w.field("created", runner.metadata.creation_timestamp);
    way_up.insert(way_up.end(), more.begin(), more.end());
    for (const auto& [key, at] : way_up)
      if (at > 0) w.field(key, format_rfc3339(at));
    w.close();
  }
  if (secret && secret->registration)
    w.field("runnerId", secret->registration->runner_id)
        .field("runnerName", secret->registration->runner_name);
  // The caller's times alone follow the registration, as their own timeline.
  if (!with_way_up) write_timeline(w, more);
}

void publish_status(self_ptr self, const step& s, const observation& o) {
  json::writer w;
  open_status_patch(w, self->state.runner->metadata.resource_version);
  if (s.phase_to_publish) w.field("phase", to_string(*s.phase_to_publish));
  write_readiness(self, w, *self->state.runner, s.pod_ready);
  std::optional<runner_event> event;
  if (s.registration_failed) {
    spdlog::warn("runner {}: GitHub refused its registration: {}", id(self),
                 self->state.memory.registration_failure);
    event = event_for_registration_failure(self->state.memory.registration_failure);
  } else if (s.phase_to_publish) {
    transition_detail detail;
    if (o.pod.runner_exited) detail.exit_code = o.pod.exit_code;
    event = event_for_transition(o.current, *s.phase_to_publish, detail);
  }
  patch_status(self, "publishing status", w, std::move(event));
}

void mark_failed(self_ptr self, const observation& o) {
  json::writer w;
  open_status_patch(w, self->state.runner->metadata.resource_version);
  std::string reason = o.has_job ? "JobPodLost" : "RetriesExhausted";
  std::string message = o.has_job ? "the runner's pod ended while it was running a job"
                                  : "the runner's pod failed " + std::to_string(o.failures + 1) + " times";
  if (o.pod.runner_exited) message += " (last exit code " + std::to_string(o.pod.exit_code) + ")";
  if (o.name_taken && !o.has_job) {
    reason = name_taken_reason;
    message = self->state.memory.name_taken;
  }
  w.field("phase", "Failed").field("reason", reason).field("message", message);
  write_readiness(self, w, *self->state.runner, o.pod.ready);
  spdlog::warn("runner {}: Failed: {}", id(self), message);
  transition_detail detail;
  detail.message = message;
  if (o.pod.runner_exited) detail.exit_code = o.pod.exit_code;
  patch_status(self, "marking Failed", w,
               event_for_transition(o.current, model::runner_phase::failed, detail));
}

void write_failure(json::writer& w, const model::runner_failure& f) {
  w.open().field("time", f.time).field("reason", f.reason).field("message", f.message);
  w.field("exitCode", f.exit_code).optional("podUID", f.pod_uid).close();
}

void record_pod_failure(self_ptr self, const observation& o) {
  auto& st = self->state;
  json::writer w;
  open_status_patch(w, st.runner->metadata.resource_version);
  w.open_array("failures");
  // Keep the newest nine, so with this one the list stays within the schema's ten.
  const auto& old = st.runner->status.failures;
  for (auto i = old.size() > 9 ? old.size() - 9 : 0; i < old.size(); ++i) write_failure(w, old[i]);
  model::runner_failure failure{format_rfc3339(wall_now(self)), "RunnerExited",
                                "the runner container exited with code " + std::to_string(o.pod.exit_code),
                                o.pod.exit_code, st.pod->metadata.uid};
  write_failure(w, failure);
  w.close_array();
  write_readiness(self, w, *st.runner, false);
  const auto delay = pod_retry_delay_seconds(o.failures + 1);
  st.memory.retry_not_before = now(self) + std::chrono::seconds(delay);
  spdlog::info("runner {}: pod failed (exit {}), recreating it after backoff", id(self), o.pod.exit_code);
  patch_status(self, "recording a pod failure", w,
               event_for_pod_retry(o.pod.exit_code, o.failures + 1, st.cfg.lim.max_pod_failures, delay));
}

void execute(self_ptr self, const step& s, const observation& o) {
  auto& st = self->state;
  switch (s.kind) {
    case step_kind::none:
      return;
    case step_kind::wait_until:
      return wake_at(self, s.at);
    case step_kind::add_finalizer:
      return hold_finalizer(self);
    case step_kind::remove_finalizer:
      return release_finalizer(self);
    case step_kind::provision:
      return provision(self);
    case step_kind::store_secret:
      return store_secret(self);
    case step_kind::create_pod: {
      // A pod made anew (a retry) mounts the Secret as the server has it now.
      if (!std::exchange(st.secret_checked, false)) return read_own_secret(self);
      auto body = pod_json(*st.runner, st.cfg.user_agent);
      if (!body) {
        // Admission rejects such templates; a Runner made without it fails here.
        spdlog::error("runner {}: cannot build its pod: {}", id(self), body.error());
        return mark_failed(self, o);
      }
      return write(self, "creating the pod", kube::create_request{kinds::pods(), st.cfg.ns, std::move(*body)},
                   &runner_state::pod);
    }
    case step_kind::mark_pod_busy:
      // One write per job, beside the job path's status write: the pod's
      // label is what the set's PodDisruptionBudget selects.
      return write(self, "marking the pod busy",
                   kube::patch_request{kinds::pods(), st.cfg.ns, model::pod_name(st.cfg.name),
                                       kube::patch_type::merge, busy_pod_patch(*st.runner), ""},
                   &runner_state::pod);
    case step_kind::publish_status:
      return publish_status(self, s, o);
    case step_kind::record_pod_failure:
      return record_pod_failure(self, o);
    case step_kind::mark_failed:
      return mark_failed(self, o);
    case step_kind::find_on_github:
      return find_on_github(self);
    case step_kind::remove_from_github:
      return remove_from_github(self, o.github_runner_id);
    case step_kind::defer_removal:
      return defer_removal(self, o.github_runner_id);
    case step_kind::delete_pod:
      return write(self, "deleting the pod",
                   kube::delete_request{kinds::pods(), st.cfg.ns, model::pod_name(st.cfg.name), {}},
                   &runner_state::pod);
  }
}

void mark_dirty(self_ptr self) { self->state.dirty.mark(self, reconcile_atom::value); }

void reconcile(self_ptr self) {
  auto& st = self->state;
  process_jobs(self);  // first: a job's write waits for no step, and a step for no job's write
  if (!st.in_flight.empty() || !st.runner) return;
  if (!st.secret_read) {  // before its first decision
    if (st.cfg.namespace_readable && !st.cfg.namespace_readable->load()) {
      if (now(self) < st.unreadable_recheck_at) return;  // a look is due then
      const auto wait = st.cfg.namespace_readable_recheck * (1 << std::min(st.unreadable_waits++, 8));
      st.unreadable_recheck_at = now(self) + std::min<std::chrono::milliseconds>(wait, st.cfg.resync);
      return wake_at(self, st.unreadable_recheck_at);
    }
    return read_own_secret(self);
  }
  if (st.secret) st.memory.unstored_jit.reset();  // stored
  const auto at = now(self);
  if (st.pod && !st.memory.pod_seen) st.memory.pod_seen_since = at;
  if (st.pod) st.memory.pod_seen = true;
  if (!st.pod || !st.pod->ready)
    st.memory.pod_ready_since = {};
  else if (st.memory.pod_ready_since == time_point{})
    st.memory.pod_ready_since = at;
  auto o = observe(*st.runner, st.pod.get(), st.secret.get(), st.memory, at);
  execute(self, next_step(o, st.cfg.lim), o);
}

void record_end(self_ptr self, const model::runner& last) {
  auto& st = self->state;
  if (!st.cfg.metrics || st.end_recorded) return;
  st.end_recorded = true;
  metrics::runner_end end;
  end.timeline = last.status.timeline;
  end.timeline.created = parse_rfc3339(last.metadata.creation_timestamp);
  // What its last pod said, where the status was not written since (a
  // runner removed before it went online).
  if (const auto& pod = st.last_pod; pod && model::owned_by(pod->metadata, last.metadata.uid)) {
    auto fill = [](model::time_point_seconds& point, std::int64_t at) {
      if (!point && at > 0) point = at;
    };
    fill(end.timeline.pod_scheduled, pod->scheduled_at);
    fill(end.timeline.containers_started, pod->runner_started_at);
    fill(end.timeline.online, pod->ready_at);
    end.requests = pod->requests;
  }
  end.timeline.gone = wall_now(self);
  if (last.status.job) end.repository = last.status.job->repository;
  st.cfg.metrics->runner_gone(st.cfg.ns, last.spec->runner_set_name, last.spec->variant, end);
}

runner_impl::behavior_type runner_behavior(self_ptr self, runner_actor_config cfg) {
  self->state.cfg = std::move(cfg);
  self->delayed_send(self, self->state.cfg.resync, resync_atom::value);
  return {
      [=](resync_atom) {
        give_up_lost(self);
        mark_dirty(self);
        self->delayed_send(self, self->state.cfg.resync, resync_atom::value);
      },
      [=](watched::runner_event& ev) {
        if (ev.type == kube::event_type::deleted) {  // finalizer removed: nothing left to do
          if (ev.obj) record_end(self, *ev.obj);
          return self->quit();
        }
        set_runner(self, std::move(ev.obj));
        mark_dirty(self);
      },
      [=](watched::pod_event& ev) {
        set_child(self, &runner_state::pod, ev);
        mark_dirty(self);
      },
      [=](messages::job_started& job) {
        self->state.jobs.push_back(std::move(job));
        process_jobs(self);
      },
      [=](messages::job_completed& job) {
        self->state.jobs.push_back(std::move(job));
        process_jobs(self);
      },
      [=](made_here_atom) {
        // No earlier actor registered it, so none stored its JIT Secret:
        // nothing to read before the first decision.
        auto& st = self->state;
        st.memory.earlier_registration_possible = false;
        st.secret_read = st.secret_checked = true;
      },
      [=](removed_from_github_atom) {
        self->state.memory.removal = github_removal::removed;
        mark_dirty(self);
      },
      [=](wake_atom, std::uint64_t generation) {
        process_jobs(self);
        if (generation == self->state.wake_generation) mark_dirty(self);
      },
      [=](reconcile_atom) {
        self->state.dirty.taken();
        reconcile(self);
      },
  };
}

}  // namespace octorun::runner::detail

namespace octorun::runner {

runner_actor spawn_runner(caf::local_actor* parent, runner_actor_config cfg) {
  return parent->spawn(detail::runner_behavior, std::move(cfg));
}

runner_actor spawn_runner(caf::actor_system& sys, runner_actor_config cfg) {
  return sys.spawn(detail::runner_behavior, std::move(cfg));
}

}  // namespace octorun::runner
