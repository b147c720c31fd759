// The RunnerSet actor: its handlers observe (watch events, job messages,
// replies update `world`), mark the set dirty, and one reconcile per turn
// of the mailbox asks plan() what to do and executes it (execute.cpp).
#include "actors/runnerset/runnerset_actor.hpp"

#include <spdlog/spdlog.h>

#include <optional>
#include <utility>

#include "actors/metrics/event_metrics.hpp"
#include "actors/runner/children.hpp"
#include "actors/runner/jit_conflict.hpp"
#include "actors/runnerset/routing.hpp"
#include "actors/runnerset/set_state.hpp"
#include "actors/runnerset/start_time.hpp"
#include "actors/runnerset/stuck_start.hpp"
#include "actors/supervisor/supervisor.hpp"
#include "actors/typed.hpp"
#include "adapters/github/github_workers.hpp"
#include "adapters/kube/protocol.hpp"
#include "common/json.hpp"
#include "common/rfc3339.hpp"
#include "messages/jobs.hpp"
#include "model/naming.hpp"
#include "model/parse.hpp"
#include "model/pod_config.hpp"

namespace octorun::runnerset {
namespace detail {

std::string id(self_ptr self) { return self->state.cfg.ns + "/" + self->state.cfg.name; }

bool listening(const set_state& st) {
  return st.world.set && st.world.set->spec.intake == model::intake_mode::listener;
}

bool github_unreachable(self_ptr self) {
  auto& st = self->state;
  const bool unreachable = github_unreachable_for_deletion(st.world);
  if (unreachable && !std::exchange(st.github_abandoned, true))
    spdlog::warn(
        "runnerset {}: its credentials Secret {} is gone and none were loaded; leaving its runners' "
        "registrations and scale sets to GitHub",
        id(self), st.world.set->spec.credentials_secret_name);
  return unreachable;
}

void mark_dirty(self_ptr self) { self->state.dirty.mark(self, reconcile_atom::value); }

void note_runner_registration(self_ptr self, const github::error* failed) {
  auto why = failed ? failed->describe() : std::string();
  auto& w = self->state.world;
  if (why == w.runner_registration_error) return;
  w.runner_registration_error = std::move(why);
  mark_dirty(self);  // the next plan's Events say so
}

void reconcile(self_ptr self) {
  auto& st = self->state;
  auto& w = st.world;
  if (!w.set) return;
  w.now = self->clock().now();
  forget_old_jobs(w);
  w.has_finalizer = has_set_finalizer(*st.set_object);
  // A Runner seen (or being made) again: a LIST must confirm none is left.
  if (!w.runners.empty() || !w.in_flight.of(action_kind::create_runners).empty())
    w.no_runners_confirmed = false;
  w.wall_time = format_rfc3339(st.cfg.wall_clock());
  github_unreachable(self);
  observe_github_budget(self);
  st.namespace_readable->store(reads_granted(w));
  auto p = plan(w);
  st.status_stale |= p.status_after_write;
  for (const auto& [variant, desired] : p.desired)
    w.scale_down.try_emplace(variant, st.cfg.scale_down_window).first->second.floor(w.now, desired);
  for (const auto& a : p.actions) execute(self, a);
  note_plan_done(w.creates);
  record_events(self, p);
  report_runner_versions(self, p);
}

// ---- observing -------------------------------------------------------------------

// A Runner as watched; what the set remembers of it (its JIT registration's id,
// busy, job completed) is kept. A Runner of the name with another uid comes
// after its predecessor's deletion, which erased the record: a watch is
// ordered, and a relist sends the deletion first (kube::replace_all).
void observe_runner(set_observation& w, model::spec_fingerprints& fingerprints, const model::runner& r) {
  auto& t = w.runners[r.metadata.name];
  t.uid = r.metadata.uid;
  t.view.name = r.metadata.name;
  t.view.phase = r.status.phase;
  t.view.has_job = r.status.job.has_value() && r.status.job->id != 0;
  t.view.deleting = r.metadata.deleting;
  t.view.pod_ready = r.status.pod_ready;
  t.view.created = parse_rfc3339(r.metadata.creation_timestamp).value_or(0);
  t.variant = r.spec->variant;
  t.status_runner_id = r.status.runner_id;
  t.pod_fingerprint = fingerprints.of(r.spec);
  t.kubernetes_mode =
      r.spec->pod.container_mode && r.spec->pod.container_mode->type == model::container_mode::kubernetes;
  w.kubernetes_runners_seen |= t.kubernetes_mode;
  if (t.view.phase == model::runner_phase::outdated && t.pod_fingerprint != 0)
    w.deprecated_exits.insert_or_assign(t.variant, deprecated_exit{t.pod_fingerprint, t.reported_version});
}

// Counts a job as demand on the variant its labels pick.
void add_demand(self_ptr self, const messages::job_info& job) {
  auto& st = self->state;
  if (st.completed_jobs.count(job.job_id) > 0) return;
  if (job.source == messages::job_source::listener) return;  // its statistics are the demand
  if (!st.world.set) {  // kept until the RunnerSet is read, never dropped
    st.early_demand.push_back(job);
    return;
  }
  note_job_arrival(st.world, job, self->clock().now());  // (a job queued before the set was read: now)
  auto variants = model::effective_variants(st.world.set->spec);
  if (auto v = variant_for_job(variants, job.labels)) {
    st.world.active_jobs.emplace(job.job_id, variants[*v].name);
    st.job_runs.emplace(job.job_id, followed_job{job.run_id, job.repository});
  }
}

// Stops what this actor owns: its Runners' actors and its GitHub workers.
void stop_children(self_ptr self) {
  auto& st = self->state;
  if (st.runners.supervisor()) caf::anon_send_exit(st.runners.supervisor(), caf::exit_reason::user_shutdown);
  if (st.github) caf::anon_send_exit(st.github, caf::exit_reason::user_shutdown);
  if (st.listeners) caf::anon_send_exit(st.listeners, caf::exit_reason::user_shutdown);
  if (st.scaleset_admin) caf::anon_send_exit(st.scaleset_admin, caf::exit_reason::user_shutdown);
}

void on_runner(self_ptr self, watched::runner_event& ev);
void on_job_started(self_ptr self, const messages::job_started& m);

void on_runnerset(self_ptr self, watched::runnerset_event& ev) {
  auto& st = self->state;
  auto& w = st.world;
  if (ev.type == kube::event_type::deleted) {
    stop_children(self);
    return self->quit();
  }
  const auto& set = *ev.obj;
  const bool credentials_changed =
      !w.set || w.set->spec.credentials_secret_name != set.spec.credentials_secret_name ||
      w.set->spec.scope_url != set.spec.scope_url || w.set->spec.intake != set.spec.intake ||
      w.set->spec.pod.proxy != set.spec.pod.proxy || w.set->spec.pod.ca_bundle != set.spec.pod.ca_bundle;
  if (w.set && w.set->spec.credentials_secret_name != set.spec.credentials_secret_name) {
    // Another Secret now: the set's finalizer on the one before goes.
    if (w.credentials_secret && w.credentials_secret->held)
      w.former_credentials.insert(w.credentials_secret->name);
    w.credentials_secret.reset();
  }
  // Its class is judged again on a change of its spec only (a new
  // generation; 0: a generation the object does not carry): most events are
  // the set's own status writes, and a judgement reads its templates.
  const bool spec_changed =
      !w.set || set.metadata.generation == 0 || w.set->metadata.generation != set.metadata.generation;
  w.set = set;
  st.set_object = std::move(ev.obj);
  for (auto& [name, runner] : std::exchange(st.early_runners, {})) on_runner(self, runner);
  load_deferred_removals(self);
  for (const auto& job : std::exchange(st.early_demand, {})) add_demand(self, job);
  for (const auto& m : std::exchange(st.early_starts, {})) on_job_started(self, m);
  if (spec_changed) judge_class(self);  // reads the credentials itself when where they are changed
  if (credentials_changed) {
    st.credentials_version.clear();
    if (!w.in_flight.contains(action_kind::read_credentials)) read_credentials(self);
  }
  mark_dirty(self);
}

// The Runner a Pod belongs to (its label); empty: none.
std::string runner_of(const watched::pod_event& ev) {
  const auto& labels = ev.obj->metadata.labels;
  auto label = labels.find(model::label_runner);
  return label == labels.end() ? std::string() : label->second;
}

// Pod events go to their Runner's actor, only for Runners the set knows: a
// late event must not resurrect a retired actor. The Pod event of a Runner
// not seen yet (a new leader's informers list in any order) is kept, the
// latest, and handed over once its Runner is (on_runner); its deletion
// drops it.
void on_pod(self_ptr self, watched::pod_event& ev) {
  auto runner = runner_of(ev);
  if (runner.empty()) return;
  if (auto known = self->state.world.runners.find(runner); known != self->state.world.runners.end()) {
    for (const auto& c : ev.obj->containers)  // what its runner said of its version, if it did
      if (c.name == model::runner_container && c.reported_version)
        known->second.reported_version = c.reported_version;
    if (ev.type != kube::event_type::deleted) {
      // Scheduled first: its wait for a node goes into its start-up sample.
      note_runner_scheduled(self->state.world, runner, *ev.obj);
      note_runner_pod(self->state.world, runner, *ev.obj);
    }
    return self->state.runners.send(self, runner, std::move(ev));
  }
  auto& early = self->state.early_pods;
  if (ev.type == kube::event_type::deleted)
    early.erase(runner);
  else
    early.insert_or_assign(runner, std::move(ev));
}

// A Runner labelled for this set that the set did not make (a hand-made
// one, or another set's): no actor, no JIT configuration, not counted; one
// Warning Event on it says why, and it is otherwise left alone.
void on_foreign_runner(self_ptr self, const model::runner& r) {
  auto& st = self->state;
  const auto& meta = r.metadata;
  st.unjudged_starts.erase(meta.name);
  auto [known, added] = st.foreign_runners.try_emplace(meta.name, meta.uid);
  if (!added && known->second == meta.uid) return;
  known->second = meta.uid;
  const auto& set = *st.world.set;
  const auto owner = meta.owner_kind.empty()
                         ? std::string("it has no controller ownerReference")
                         : "its controller is " + meta.owner_kind + " uid " + meta.owner_uid;
  const auto why = "RunnerSet " + set.metadata.name + " (uid " + set.metadata.uid +
                   ") did not make this Runner (" + owner +
                   "): it gets no GitHub registration and the manager leaves it alone; only the manager "
                   "creates Runners";
  spdlog::warn("runnerset {}: Runner {}: {}", id(self), meta.name, why);
  if (!st.cfg.events) return;
  kube::event_spec spec;
  spec.regarding = {model::api_version, "Runner", meta.namespace_, meta.name, meta.uid};
  spec.type = "Warning";
  spec.reason = "NotMadeByRunnerSet";
  spec.action = "Ignore";
  spec.note = why;
  caf::anon_send(st.cfg.events, std::move(spec));
}

void on_runner(self_ptr self, watched::runner_event& ev) {
  auto& st = self->state;
  auto& w = st.world;
  const auto name = ev.obj->metadata.name;
  if (!w.set) {  // whose it is, is known with the set's uid
    if (ev.type == kube::event_type::deleted)
      st.early_runners.erase(name);
    else
      st.early_runners.insert_or_assign(name, std::move(ev));
    return;
  }
  if (ev.type != kube::event_type::deleted && !model::runner_made_by(ev.obj->metadata, w.set->metadata.uid)) {
    // One the set made keeps its place whatever is done to its references
    // since: its registration is the set's to remove.
    auto known = w.runners.find(name);
    if (known == w.runners.end() || known->second.uid != ev.obj->metadata.uid)
      return on_foreign_runner(self, *ev.obj);
  }
  const bool made_here = w.being_created(name);
  w.in_flight.erase({action_kind::create_runners, name});  // created: the watch shows it
  w.unconfirmed_creates.erase(name);
  if (ev.type == kube::event_type::deleted) {
    w.runners.erase(name);
    st.foreign_runners.erase(name);
    st.unjudged_starts.erase(name);
    st.early_pods.erase(name);
    st.runner_jobs.erase(name);
    st.runners.retire(name);
  } else {
    if (made_here && w.runners.count(name) == 0)
      self->state.runners.send(self, name, runner::made_here_atom::value);
    auto seen = w.runners.find(name);
    const bool was_unfinished = seen != w.runners.end() && !seen->second.view.finished();
    observe_runner(w, st.fingerprints, *ev.obj);
    note_runner_seen(w, name, self->clock().now());
    // The job it runs, which the sweep follows to its end (a `completed`
    // lost while no leader served would leave it running for ever).
    if (const auto& job = ev.obj->status.job;
        job && job->id != 0 && ev.obj->status.phase == model::runner_phase::running)
      st.runner_jobs[name] = {job->id, followed_job{job->run_id, job->repository}};
    else
      st.runner_jobs.erase(name);
    // Finished just now with a job whose completion GitHub has not sent yet:
    // the job is over, though GitHub may still count it (plan.hpp,
    // unheard_completions).
    const auto& runner = w.runners[name];
    if (const auto& job = ev.obj->status.job; job && job->id != 0 && was_unfinished &&
                                              runner.view.finished() && !st.completed_jobs.contains(job->id))
      w.unheard_completions.insert_or_assign(job->id,
                                             unheard_completion{runner.variant, self->clock().now()});
    // Its Pod first, when it was watched before it: its actor decides on its
    // first Runner event, and without it would take a running pod for a
    // vanished one.
    if (auto early = st.early_pods.extract(name)) on_pod(self, early.mapped());
    self->state.runners.send(self, name, std::move(ev));
    if (auto start = st.unjudged_starts.extract(name)) self->state.runners.send(self, name, start.mapped());
  }
  mark_dirty(self);
}

// A job message of the other intake (e.g. a webhook delivery for a
// Listener set): not heeded (routing.hpp).
bool other_intake(self_ptr self, const messages::job_info& job) {
  const auto& set = self->state.world.set;
  return set && !heeds_job_message(set->spec.intake, job.source == messages::job_source::listener);
}

template <class Job>
void on_demand(self_ptr self, const Job& m) {
  if (other_intake(self, m.job)) return;
  // A job that completed already (a late or reordered delivery) or is
  // counted already (a duplicate) changes nothing: logged once, counted.
  auto& st = self->state;
  if (st.completed_jobs.count(m.job.job_id) == 0) note_job_arrival(st.world, m.job, self->clock().now());
  if (auto stale = stale_demand(st.completed_jobs.count(m.job.job_id) > 0,
                                st.world.active_jobs.count(m.job.job_id) > 0)) {
    if (m.job.swept) return;  // the sweep found what a delivery brought: no bad input
    if (metrics::reject_input(messages::to_string(m.job.source), stale->reason, std::to_string(m.job.job_id)))
      spdlog::info("runnerset {}: job {} turned away: {}", id(self), m.job.job_id, stale->why);
    return;
  }
  add_demand(self, m.job);
  mark_dirty(self);
}

void on_job_started(self_ptr self, const messages::job_started& m) {
  auto& st = self->state;
  if (!st.world.set) {  // whether it is heeded, and whose Runner it names, is known with the set
    st.early_starts.push_back(m);
    return;
  }
  if (other_intake(self, m.job)) return;
  const bool foreign = st.foreign_runners.count(m.runner_name) > 0;
  if (st.completed_jobs.count(m.job.job_id) == 0) {
    auto runner = st.world.runners.find(m.runner_name);
    // An arrival, once per job (a start of a job never seen queued), and its queue time.
    note_job_arrival(st.world, m.job, self->clock().now());
    if (auto v = runner != st.world.runners.end() ? runner->second.variant : variant_of_job(st.world, m.job))
      note_job_start_time(st.world, *v, m.job, self->clock().now(), st.cfg.wall_clock());
    if (runner != st.world.runners.end()) {
      note_job_start(st.world, m.runner_name, m.job);
      st.world.active_jobs[m.job.job_id] = runner->second.variant;
      st.job_runs[m.job.job_id] = followed_job{m.job.run_id, m.job.repository};
    } else if (!foreign)
      add_demand(self, m.job);  // a runner we have not seen yet: count the job by its labels
    if (st.cfg.metrics)
      st.cfg.metrics->job_started(st.cfg.ns, st.cfg.name, variant_of(st.world, m.runner_name), m.job);
  }
  // The Runner's actor promotes it (or finds it gone and stands down). Only
  // a Runner the set judged its own gets one: a start naming one not seen
  // yet waits for its event (on_runner), a foreign one gets none.
  if (st.world.runners.count(m.runner_name) > 0 || st.world.being_created(m.runner_name))
    self->state.runners.send(self, m.runner_name, m);
  else if (!foreign)
    st.unjudged_starts.insert_or_assign(m.runner_name, m);
  mark_dirty(self);
}

void on_job_completed(self_ptr self, const messages::job_completed& m) {
  auto& st = self->state;
  if (other_intake(self, m.job)) return;
  const bool counted = st.world.active_jobs.erase(m.job.job_id) > 0;
  st.world.unheard_completions.erase(m.job.job_id);
  st.job_runs.erase(m.job.job_id);
  std::erase_if(st.early_demand, [&](const messages::job_info& j) { return j.job_id == m.job.job_id; });
  std::erase_if(st.early_starts,
                [&](const messages::job_started& j) { return j.job.job_id == m.job.job_id; });
  if (auto held = st.unjudged_starts.find(m.runner_name);
      held != st.unjudged_starts.end() && held->second.job.job_id == m.job.job_id)
    st.unjudged_starts.erase(held);
  const bool first_end = st.completed_jobs.count(m.job.job_id) == 0;
  auto runner = st.world.runners.find(m.runner_name);
  if (remembers_end(counted, runner != st.world.runners.end(), st.world.set.has_value(),
                    st.world.set && variant_of_job(st.world, m.job)))
    st.completed_jobs[m.job.job_id] = self->clock().now();
  if (runner != st.world.runners.end()) {
    if (first_end && st.cfg.metrics)  // every set hears of every end; the runner's owner counts it
      st.cfg.metrics->job_completed(st.cfg.ns, st.cfg.name, runner->second.variant, m.result, m.job);
    // Its one job is over: it stops serving demand now, as the job stops
    // counting as demand (just above, or in the statistics of the same
    // scale-set message); it holds its slot until its phase lands.
    runner->second.job_completed = true;
    self->state.runners.send(self, m.runner_name, m);
  }
  mark_dirty(self);
}

// A listener's session message, applied whole before the next plan (one
// reconcile_atom at most is queued behind it): its job messages in order,
// then its statistics.
void on_session_message(self_ptr self, const messages::session_message& m) {
  for (const auto& job : m.jobs)
    std::visit(
        [&](const auto& j) {
          using job_type = std::decay_t<decltype(j)>;
          if constexpr (std::is_same_v<job_type, messages::job_started>)
            on_job_started(self, j);
          else if constexpr (std::is_same_v<job_type, messages::job_completed>)
            on_job_completed(self, j);
          else
            on_demand(self, j);
        },
        job);
  if (m.statistics) on_statistics(self, *m.statistics);
}

runnerset_impl::behavior_type runnerset_behavior(self_ptr self, runnerset_actor_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.world.webhook_intake_enabled = st.cfg.webhook_intake_enabled;
  st.world.hooks_cluster_role = st.cfg.hooks_cluster_role;
  st.world.reads = st.cfg.reads;
  st.world.scale_down_period = st.cfg.scale_down_window;
  st.world.start_time_rule.window = st.cfg.start_time_window;
  st.world.observing_since = self->clock().now();
  st.world.status_hold = st.cfg.status_hold;
  st.world.reference_recheck = st.cfg.resync;
  auto runner_defaults = st.cfg.runner_defaults;
  runner_defaults.metrics = st.cfg.metrics;  // a Runner's timeline and cost are its set's
  auto kube = st.cfg.kube;
  auto ns = st.cfg.ns;
  auto set = st.cfg.name;
  auto me = caf::actor_cast<protocols::runner_github_api>(self);
  st.namespace_readable->store(reads_granted(st.world));
  std::shared_ptr<const std::atomic<bool>> readable = st.namespace_readable;
  supervision::supervisor_options runners_options;
  runners_options.tell = caf::actor_cast<caf::actor>(self);
  st.runners = supervision::child_handles<runner::runner_actor>(supervision::spawn_supervisor(
      self->system(), "runners of " + ns + "/" + st.cfg.name,
      [=](caf::local_actor* parent, const std::string& name) {
        auto c = runner_defaults;
        c.ns = ns;
        c.name = name;
        c.set = set;
        c.kube = kube;
        c.github = me;  // GitHub calls go through the set, to its current credentials
        c.namespace_readable = readable;
        return caf::actor_cast<caf::actor>(runner::spawn_runner(parent, c));
      },
      runners_options));
  // The Runner actors die with the set's actor, however it ends (a crash
  // restarts them all from the watches' state).
  spawn_listener_supervisor(self);
  st.owned->runners = st.runners.supervisor();
  // However the actor ends (a crash too: the supervisor above restarts it
  // from the watches' state), its Runner actors, listeners and GitHub
  // workers end with it; a leftover listener would hold its session.
  self->attach_functor([owned = st.owned, ns = st.cfg.ns, name = st.cfg.name, recorder = st.cfg.metrics,
                        versions = st.reported_versions](const caf::error&) {
    for (const auto& a : {owned->runners, owned->rest, owned->scale_sets, owned->listeners})
      if (a) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    metrics::forget_runnerset(ns, name);
    if (recorder)  // its variants' runner version series
      for (const auto& [variant, verdict] : *versions) recorder->runner_version(ns, name, variant, nullptr);
  });
  self->set_exit_handler([=](caf::exit_msg& em) {
    stop_children(self);
    self->quit(em.reason);
  });
  self->delayed_send(self, st.cfg.resync, tick_atom::value);
  auto events_and_jobs = caf::make_typed_behavior(
      [=](watched::runnerset_event& ev) { on_runnerset(self, ev); },
      [=](watched::runner_event& ev) { on_runner(self, ev); },
      [=](watched::pod_event& ev) { on_pod(self, ev); },
      [=](messages::platform_update& m) {
        self->state.platform = std::move(m.platform);
        judge_class(self);
      },
      [=](messages::scale_set_names_taken& m) { on_scale_set_names_taken(self, std::move(m.taken)); },
      [=](messages::job_available& m) { on_demand(self, m); },
      [=](messages::job_assigned& m) { on_demand(self, m); },
      [=](messages::job_started& m) { on_job_started(self, m); },
      [=](messages::job_completed& m) { on_job_completed(self, m); },
      [=](messages::session_message& m) { on_session_message(self, m); },
      [=](reconcile_atom) {
        self->state.dirty.taken();
        reconcile(self);
      },
      [=](tick_atom) {
        auto& s = self->state;
        auto horizon = self->clock().now() - std::chrono::hours(1);
        std::erase_if(s.completed_jobs, [&](const auto& kv) { return kv.second < horizon; });
        std::erase_if(s.world.unheard_completions, [&](const auto& kv) {
          return kv.second.since + unheard_completion_grace <= self->clock().now();
        });
        // Picks up a rotated Secret.
        if (s.world.set && !s.world.in_flight.contains(action_kind::read_credentials)) read_credentials(self);
        mark_dirty(self);
        self->delayed_send(self, s.cfg.resync, tick_atom::value);
      });
  auto runner_notices = caf::make_typed_behavior(
      [=](supervision::child_started_atom, const std::string& name, const caf::actor& runner) {
        self->state.runners.on_started(self, name, runner);
      },
      [=](supervision::child_down_atom, const std::string& name, const caf::actor_addr& runner) {
        self->state.runners.on_down(name, runner);
      },
      [=](supervision::child_gone_atom, const std::string& name, const caf::actor_addr& runner) {
        self->state.runners.on_gone(name, runner);
      });
  return compose_behavior<runnerset_impl>(events_and_jobs, wake_handler(self), listener_handlers(self),
                                          runner_github_behavior(self), sweep_handlers(self), runner_notices);
}

}  // namespace detail

runnerset_actor spawn_runnerset(caf::local_actor* parent, runnerset_actor_config cfg) {
  return parent->spawn(detail::runnerset_behavior, std::move(cfg));
}

runnerset_actor spawn_runnerset(caf::actor_system& sys, runnerset_actor_config cfg) {
  return sys.spawn(detail::runnerset_behavior, std::move(cfg));
}

}  // namespace octorun::runnerset
