#include "actors/controller/controller.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "actors/controller/job_routing.hpp"
#include "actors/controller/owned_routing.hpp"
#include "actors/controller/scale_set_claims.hpp"
#include "actors/controller/unrouted.hpp"
#include "actors/metrics/event_metrics.hpp"
#include "actors/supervisor/child_handles.hpp"
#include "actors/supervisor/supervisor.hpp"
#include "actors/watched.hpp"
#include "adapters/kube/informer.hpp"
#include "adapters/kube/protocol.hpp"
#include "messages/jobs.hpp"
#include "messages/platform.hpp"
#include "messages/scale_sets.hpp"
#include "model/class_rules.hpp"
#include "model/namespace_cap.hpp"
#include "model/naming.hpp"

namespace octorun::controller {
namespace {

struct controller_state {
  controller_config cfg;
  caf::actor kube;
  caf::actor events;  // kube::spawn_event_recorder, shared by the Runner actors
  // The RunnerSet actors, keyed "ns/name", held here and sent to straight;
  // their supervisor only restarts them.
  supervision::child_handles<runnerset::runnerset_actor> sets;
  std::vector<caf::actor> informers;
  job_routes routes;  // the sets and their runners, as watched: where job messages go
  // The keys of routes.sets, for the Pod informers' decoders (owned_routing.hpp).
  std::shared_ptr<known_sets> known = std::make_shared<known_sets>();
  // The Pod informer of each watched namespace, until it has listed (then
  // its Runner informer starts): informer -> namespace.
  std::map<caf::actor_addr, std::string> pods_listing;
  // The Runner informer of each watched namespace, until it has listed.
  std::map<caf::actor_addr, std::string> runners_listing;
  // Watched namespaces ("": all) whose Runners have listed.
  std::set<std::string> runners_listed;
  // The RunnerSet informer of each watched namespace, until it has listed,
  // and the namespaces ("": all) whose RunnerSets have: a namespace's sets
  // are served once all of them are known, so that who holds a scale-set
  // name is decided over them (a new leader's list would otherwise hand a
  // younger set a name for the moments before the older one is listed).
  std::map<caf::actor_addr, std::string> runnersets_listing;
  std::set<std::string> runnersets_listed;
  // The scale-set names each served set may not register, as last told
  // (scale_set_claims.hpp); a set not listed has not been told.
  std::map<std::string, std::map<std::string, messages::scale_set_taken>> told_taken;
  // RunnerSet events held until their namespace's Runners have listed, the
  // latest per set ("ns/name").
  std::map<std::string, watched::runnerset_event> held_sets;
  // What the platform declared, as watched (cluster-wide): the RunnerClasses
  // and each namespace's labels, each complete once its informer listed.
  // Every change makes a new snapshot that every set actor gets.
  std::map<std::string, model::runner_class> classes;
  std::map<std::string, std::map<std::string, std::string>> namespace_labels;
  caf::actor_addr classes_informer, namespaces_informer;
  bool classes_listed = false, namespaces_listed = false;
  model::platform_classes_ptr platform;  // null until both listed
  std::set<std::string> told_platform;   // the sets the current snapshot went to
  static constexpr const char* name = "controller";
};

// The interface plus what the supervisor of the sets tells it.
using controller_impl = controller_actor::extend_with<supervision::child_notices>;
using self_ptr = controller_impl::stateful_pointer<controller_state>;

// A set's event, after the platform's current snapshot if the set has not
// had it: its actor judges it against its class before it acts on it.
template <class Event>
void route_set(self_ptr self, const std::string& key, Event&& ev) {
  auto& st = self->state;
  if (st.platform && st.told_platform.insert(key).second)
    self->state.sets.send(self, key, messages::platform_update{st.platform});
  self->state.sets.send(self, key, std::forward<Event>(ev));
}

// A set as its class's cap per namespace counts it: not once it is being
// deleted (it starts no runner any more).
std::optional<model::namespace_set> counted(const model::runnerset* set) {
  if (set == nullptr || set->metadata.deleting) return std::nullopt;
  return model::namespace_set_of(set->metadata, set->spec);
}

// Whether the set's class admits it now, judged as its actor judges it:
// the router sends demand to no other set.
void judge_route(controller_state& st, const std::string& key, const model::runnerset& set) {
  auto verdict = model::judge_set_at_use(set.metadata.namespace_, set.metadata.name, set.spec,
                                         st.platform.get(), st.cfg.runnerset_defaults.classes);
  if (verdict && verdict->admitted())
    st.routes.admitted.insert(key);
  else
    st.routes.admitted.erase(key);
  if (verdict && !verdict->class_name.empty())
    st.routes.classes[key] = verdict->class_name;
  else
    st.routes.classes.erase(key);
}

// A new snapshot of the platform's classes, namespaces and the sets each
// namespace holds, to every set.
void publish_platform(self_ptr self) {
  auto& st = self->state;
  if (!st.classes_listed || !st.namespaces_listed) return;
  auto p = std::make_shared<model::platform_classes>();
  p->classes = st.classes;
  p->namespace_labels = st.namespace_labels;
  for (const auto& [key, set] : st.routes.sets)
    if (auto c = counted(set.get())) p->namespace_sets[set->metadata.namespace_].push_back(std::move(*c));
  st.platform = std::move(p);
  st.told_platform.clear();
  for (const auto& [key, set] : st.routes.sets) judge_route(st, key, *set);
  for (const auto& [key, set] : st.routes.sets) {
    if (st.held_sets.count(key) > 0) continue;  // told when released
    st.told_platform.insert(key);
    self->state.sets.send(self, key, messages::platform_update{st.platform});
  }
}

// Who holds each scale-set name, over every set watched: each served set
// whose names changed is told (before its own event, when it has one).
void publish_scale_set_claims(self_ptr self) {
  auto& st = self->state;
  auto taken = scale_set_names_taken(st.routes.sets);
  for (auto it = st.told_taken.begin(); it != st.told_taken.end();)
    it = st.routes.sets.count(it->first) > 0 ? std::next(it) : st.told_taken.erase(it);
  for (const auto& [key, set] : st.routes.sets) {
    if (st.held_sets.count(key) > 0) continue;  // told when released
    std::map<std::string, messages::scale_set_taken> now;
    if (auto t = taken.find(key); t != taken.end()) now = std::move(t->second);
    auto told = st.told_taken.find(key);
    if (told != st.told_taken.end() && told->second == now) continue;
    if (told == st.told_taken.end() && now.empty() && set->spec.intake != model::intake_mode::listener)
      continue;  // nothing to say to a set that claims no scale set
    for (const auto& [variant, t] : now)
      if (told == st.told_taken.end() || told->second.count(variant) == 0)
        spdlog::warn("controller: RunnerSet {} may not register scale set {}: RunnerSet {} holds it", key,
                     t.scale_set_name, t.holder);
    st.told_taken[key] = now;
    self->state.sets.send(self, key, messages::scale_set_names_taken{std::move(now)});
  }
}

// An unreadable class is never cached (the informer logs it): a set
// naming it is refused as naming a class that does not exist.
void on_runner_class(self_ptr self, const watched::runner_class_event& ev) {
  if (!ev.obj) return;
  auto& st = self->state;
  if (ev.type == kube::event_type::deleted)
    st.classes.erase(ev.obj->metadata.name);
  else
    st.classes.insert_or_assign(ev.obj->metadata.name, *ev.obj);
  publish_platform(self);
}

void on_namespace(self_ptr self, const watched::namespace_event& ev) {
  if (!ev.obj) return;
  auto& st = self->state;
  const auto& name = ev.obj->metadata.name;
  // Only a change of labels matters to a class's namespaceSelector.
  if (ev.type == kube::event_type::deleted) {
    if (st.namespace_labels.erase(name) == 0) return;
  } else {
    auto [it, inserted] = st.namespace_labels.try_emplace(name, ev.obj->metadata.labels);
    if (!inserted && it->second == ev.obj->metadata.labels) return;
    it->second = ev.obj->metadata.labels;
  }
  publish_platform(self);
}

// A set is served once its namespace's RunnerSets and Runners have listed.
bool servable(const controller_state& st, const std::string& ns) {
  auto listed = [&ns](const std::set<std::string>& namespaces) {
    return namespaces.count("") > 0 || namespaces.count(ns) > 0;
  };
  return listed(st.runnersets_listed) && listed(st.runners_listed);
}

// A set plans from its Runners: one that planned before they were listed
// (a new leader) would count none and create more than maxRunners, or a
// second runner for a job the sweep found running. So its RunnerSet reaches
// it once its namespace's Runners have listed; Runner and Pod events
// and job messages that come first wait in its actor, which acts on none of
// them before it has read its RunnerSet.
void on_runnerset(self_ptr self, watched::runnerset_event& ev) {
  auto& st = self->state;
  if (st.cfg.observer) self->send(st.cfg.observer, ev);
  const auto& meta = ev.obj->metadata;
  auto key = meta.namespace_ + "/" + meta.name;
  // What its namespace's sets count against their classes' caps changed
  // (a status write, `kubectl scale`, changes nothing of it): every set is
  // told (a held set once released).
  auto recounted = [](const model::runnerset* before, const model::runnerset* after) {
    return counted(before) != counted(after);
  };
  if (ev.type == kube::event_type::deleted) {
    st.known->erase(key);
    const bool held = st.held_sets.erase(key) > 0;
    st.told_platform.erase(key);
    st.routes.admitted.erase(key);
    st.routes.installations.erase(key);
    st.routes.classes.erase(key);
    auto known = st.routes.sets.find(key);
    const bool started = known != st.routes.sets.end();
    std::shared_ptr<const model::runnerset> before;
    if (started) {
      before = std::move(known->second);
      st.routes.sets.erase(known);
    }
    publish_scale_set_claims(self);  // the next oldest takes what it held
    if (recounted(before.get(), nullptr)) publish_platform(self);
    if (!started && !held) return;  // never started: nothing to stop
  } else {
    auto& known = st.routes.sets[key];
    st.known->insert(key);
    // Most events (status writes) change no set's claims: not judged again.
    const bool claims_changed = !known || !same_claims(*known, *ev.obj);
    // Nor its class's verdict, which reads only its spec (a new generation;
    // 0: an object that carries none) and the platform (publish_platform
    // judges every set again when that changes).
    const bool respecified = !known || ev.obj->metadata.generation == 0 ||
                             known->metadata.generation != ev.obj->metadata.generation;
    const bool recount = recounted(std::exchange(known, ev.obj).get(), ev.obj.get());
    if (respecified) judge_route(st, key, *known);
    if (!servable(st, meta.namespace_)) {
      st.held_sets.insert_or_assign(key, std::move(ev));
      if (recount) publish_platform(self);
      return;
    }
    if (recount) publish_platform(self);
    if (claims_changed) publish_scale_set_claims(self);
  }
  const bool deleted = ev.type == kube::event_type::deleted;
  route_set(self, key, std::move(ev));
  // Its actor ends on the deletion: a set made again under the name gets a
  // new one, however soon its first event comes.
  if (deleted) st.sets.retire(key);
}

// Whether a Pod informer keeps a Pod (intake_of_pod), asked on its
// reflector's thread for each Pod listed or watched. One refused is bad
// input, counted and logged once per namespace, unless it is on its way out
// (deletionTimestamp set: the updates that end it and its deletion were
// counted when it came).
bool keep_pod(const model::owned_object_meta& pod, const known_sets& known) {
  const auto intake = intake_of_pod(pod, known);
  if (intake == pod_intake::keep) return true;
  if (intake == pod_intake::no_set || pod.deleting) return false;
  const bool unknown = intake == pod_intake::unknown_set;
  if (metrics::reject_input("watch", unknown ? unknown_set_reason : not_a_runners_pod_reason, pod.namespace_))
    spdlog::info(
        "controller: Pod {}/{} is labelled for RunnerSet {}, {}: not watched, as every such Pod of the "
        "namespace (logged once; counted in octorun_rejected_input_total)",
        pod.namespace_, pod.name, pod.labels.at(model::label_runnerset),
        unknown ? "which does not exist" : "but no Runner of it controls the Pod");
  return false;
}

// Routes the event of an object a RunnerSet owns (a Runner or a Pod) to its
// set's actor. One naming a set not watched (owned_routing.hpp) spawns
// nothing: a deletion (its set went before it) is dropped, anything else is
// bad input, counted and logged once per namespace.
template <class Event>
void route_owned(self_ptr self, const std::optional<std::string>& key, Event& ev, const char* kind) {
  switch (route_of_owned(self->state.routes.sets, key)) {
    case owned_route::to_set:
      return self->state.sets.send(self, *key, std::move(ev));
    case owned_route::no_set:
      return;
    case owned_route::unknown_set:
      if (ev.type == kube::event_type::deleted) return;
      // Logged once per namespace: a flood of such objects is one line.
      if (metrics::reject_input("watch", unknown_set_reason, ev.obj->metadata.namespace_))
        spdlog::info(
            "controller: {} {}/{} is labelled for RunnerSet {}, which does not exist: ignored, as every such "
            "object of the namespace (logged once; counted in octorun_rejected_input_total)",
            kind, ev.obj->metadata.namespace_, ev.obj->metadata.name, *key);
      return;
  }
}

void on_runner(self_ptr self, watched::runner_event& ev) {
  auto& st = self->state;
  if (st.cfg.observer) self->send(st.cfg.observer, ev);
  auto key = owning_set(ev.obj->metadata);
  if (!key) return;
  const auto& meta = ev.obj->metadata;
  if (ev.type == kube::event_type::deleted) {
    if (auto holders = st.routes.runner_sets.find(meta.name); holders != st.routes.runner_sets.end()) {
      holders->second.erase(meta.namespace_);
      if (holders->second.empty()) st.routes.runner_sets.erase(holders);
    }
  } else if (route_of_owned(st.routes.sets, key) == owned_route::to_set) {
    st.routes.runner_sets[meta.name][meta.namespace_] = *key;
  }
  route_owned(self, key, ev, "Runner");
}

void on_pod(self_ptr self, watched::pod_event& ev) {
  route_owned(self, owning_set(ev.obj->metadata), ev, "Pod");
}

// Bad input (unrouted.hpp): counted, logged once per repository or label set.
void reject_demand(const messages::job_info& job, unrouted why) {
  std::string labels;
  for (const auto& l : job.labels) labels += l + ",";
  const auto key = why == unrouted::unserved_repository ? job.repository : job.repository + " " + labels;
  if (metrics::reject_input(messages::to_string(job.source), reason_label(why), key))
    spdlog::info("controller: job {} turned away: {} (logged once; counted in octorun_rejected_input_total)",
                 job.job_id, describe(why, job));
}

// The job router: a job message or a listener's session message from either intake to
// the sets job_routing.hpp picks.
template <class Message>
void on_job(self_ptr self, const Message& m) {
  for (const auto& key : destinations(self->state.routes, m)) self->state.sets.send(self, key, m);
}

// Demand no set takes: bad input (only the webhook's demand comes one job
// at a time; a listener's comes in its set's session messages).
template <class Demand>
void on_demand(self_ptr self, const Demand& m) {
  auto keys = destinations(self->state.routes, m);
  for (const auto& key : keys) self->state.sets.send(self, key, m);
  if (!keys.empty()) return;
  reject_demand(m.job, why_unrouted(self->state.routes, m.job));
}

// A set's actor loaded its credentials: a delivery naming an App
// installation goes only to that installation's sets.
void on_set_credentials(self_ptr self, const messages::set_credentials& m) {
  auto& routes = self->state.routes;
  if (routes.sets.count(m.runner_set) > 0) routes.installations[m.runner_set] = m.app_installation_id;
}

// A typed informer of one kind (watched.hpp) in `ns` ("": all namespaces),
// delivering to `self`.
using spawn_watch = caf::actor (*)(caf::actor_system&, const kube::config&, kube::client_options,
                                   kube::informer_options);
caf::actor watch(self_ptr self, spawn_watch spawn, const std::string& ns, const std::string& selector) {
  auto& st = self->state;
  kube::informer_options io;
  io.ns = ns;
  io.label_selector = selector;
  auto inf = spawn(self->system(), st.cfg.kube, st.cfg.kube_options, io);
  caf::anon_send(inf, kube::subscribe_atom::value, caf::actor_cast<caf::actor>(self));
  st.informers.push_back(inf);
  return inf;
}

void start_watches(self_ptr self) {
  auto& st = self->state;
  // The platform's RunnerClasses and the namespaces' labels, cluster-wide
  // whatever namespaces the sets are watched in.
  st.classes_informer = watch(self, watched::watch_runner_classes, "", "").address();
  st.namespaces_informer = watch(self, watched::watch_namespaces, "", "").address();
  for (const auto& ns : st.cfg.namespaces.empty() ? std::vector<std::string>{""} : st.cfg.namespaces)
    st.runnersets_listing[watch(self, watched::watch_runnersets, ns, "").address()] = ns;
}

// A namespace's RunnerSets listed: its Pods are watched (its Runners once
// they have listed). So every RunnerSet is known before any object
// labelled for it arrives, and an object labelled for a set not known names
// one that does not exist (owned_routing.hpp): it spawns nothing.
// A Runner's actor judges on its first event whether its pod is gone: its
// Pods must be known by then. So a namespace's Runners are watched once its
// Pods have listed (a new leader's informers would list in any order; a
// Runner seen before its pod was marked Failed while it ran its job).
// Relists keep their caches, so both hold after a 410 too. Secrets are not
// watched (no list or watch right on them): a Runner's actor reads its own
// JIT Secret by name before it decides anything.
void watch_children(self_ptr self, const std::string& ns) {
  auto& st = self->state;
  kube::informer_options io;
  io.ns = ns;
  io.label_selector = model::label_runnerset;
  auto pods = watched::watch_pods(
      self->system(), st.cfg.kube, st.cfg.kube_options, io,
      [known = st.known](const model::runner_pod& pod) { return keep_pod(pod.metadata, *known); });
  caf::anon_send(pods, kube::subscribe_atom::value, caf::actor_cast<caf::actor>(self));
  st.informers.push_back(pods);
  st.pods_listing[pods.address()] = ns;
}

// A namespace's Runners, or the last RunnerSets, listed: the RunnerSets
// held until now that may be served reach their actors, each after what it
// may not register.
void release_held_sets(self_ptr self) {
  auto& st = self->state;
  std::vector<std::pair<std::string, watched::runnerset_event>> released;
  for (auto it = st.held_sets.begin(); it != st.held_sets.end();) {
    if (!servable(st, it->second.obj->metadata.namespace_)) {
      ++it;
      continue;
    }
    released.emplace_back(it->first, std::move(it->second));
    it = st.held_sets.erase(it);
  }
  if (released.empty()) return;
  publish_scale_set_claims(self);
  for (auto& [key, ev] : released) route_set(self, key, std::move(ev));
}

// An informer listed: once a namespace's RunnerSets have, its Pods are
// watched; once its Pods have, its Runners; once its Runners have, its
// RunnerSets are served.
void on_synced(self_ptr self, const kube::informer_synced& s) {
  spdlog::info("controller: {} synced ({} objects)", s.source, s.count);
  auto& st = self->state;
  const auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
  if (sender == st.classes_informer || sender == st.namespaces_informer) {
    (sender == st.classes_informer ? st.classes_listed : st.namespaces_listed) = true;
    return publish_platform(self);
  }
  if (auto sets = st.runnersets_listing.find(sender); sets != st.runnersets_listing.end()) {
    const auto ns = sets->second;
    st.runnersets_listed.insert(ns);
    st.runnersets_listing.erase(sets);
    watch_children(self, ns);
    return release_held_sets(self);
  }
  if (auto runners = st.runners_listing.find(sender); runners != st.runners_listing.end()) {
    st.runners_listed.insert(runners->second);
    st.runners_listing.erase(runners);
    return release_held_sets(self);
  }
  auto pods = st.pods_listing.find(sender);
  if (pods == st.pods_listing.end()) return;
  const auto ns = pods->second;
  st.pods_listing.erase(pods);
  st.runners_listing[watch(self, watched::watch_runners, ns, std::string(model::label_runnerset)).address()] =
      ns;
}

controller_impl::behavior_type controller_behavior(self_ptr self, controller_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  // A request that queued longer than its actor waits for the answer is not
  // sent: under a burst the queue would otherwise spend the apiserver on
  // answers nobody reads while the retries queue behind them.
  const auto answer_within = std::min(st.cfg.runnerset_defaults.request_timeout,
                                      st.cfg.runnerset_defaults.runner_defaults.request_timeout);
  st.kube = kube::spawn_request_pool(self->system(), st.cfg.kube, st.cfg.kube_options, st.cfg.kube_workers,
                                     answer_within);
  if (st.cfg.record_events)
    st.events = kube::spawn_event_recorder(self->system(), st.cfg.kube, st.cfg.kube_options,
                                           st.cfg.reporting_controller, st.cfg.reporting_instance,
                                           {.on_drop = [] { metrics::count_dropped_kube_event(); }});
  auto defaults = st.cfg.runnerset_defaults;
  defaults.kube = st.kube;
  defaults.events = st.events;
  defaults.runner_defaults.events = st.events;
  defaults.job_router = self;  // the jobs its webhook sweep finds are routed as deliveries
  defaults.credentials_told = self;
  supervision::supervisor_options sets_options;
  sets_options.tell = caf::actor_cast<caf::actor>(self);
  st.sets = supervision::child_handles<runnerset::runnerset_actor>(supervision::spawn_supervisor(
      self->system(), "runnersets",
      [defaults](caf::local_actor* parent, const std::string& key) {
        auto c = defaults;
        auto slash = key.find('/');
        c.ns = key.substr(0, slash);
        c.name = key.substr(slash + 1);
        return caf::actor_cast<caf::actor>(runnerset::spawn_runnerset(parent, c));
      },
      sets_options));
  start_watches(self);
  self->set_exit_handler([=](caf::exit_msg& em) {
    auto& s = self->state;
    for (auto& inf : s.informers) self->send_exit(inf, em.reason);
    self->send_exit(s.sets.supervisor(), em.reason);
    self->send_exit(s.kube, em.reason);
    if (s.events) self->send_exit(s.events, em.reason);
    self->quit(em.reason);
  });
  std::string where;
  for (const auto& ns : st.cfg.namespaces) where += (where.empty() ? "" : ", ") + ns;
  spdlog::info("controller: watching RunnerSets in {}", where.empty() ? "every namespace" : where);
  return {
      [=](watched::runnerset_event& ev) { on_runnerset(self, ev); },
      [=](watched::runner_event& ev) { on_runner(self, ev); },
      [=](watched::pod_event& ev) { on_pod(self, ev); },
      [=](watched::runner_class_event& ev) { on_runner_class(self, ev); },
      [=](watched::namespace_event& ev) { on_namespace(self, ev); },
      [=](kube::informer_synced& s) { on_synced(self, s); },
      [=](messages::job_available& m) { on_demand(self, m); },
      [=](messages::job_assigned& m) { on_demand(self, m); },
      [=](messages::job_started& m) { on_job(self, m); },
      [=](messages::job_completed& m) { on_job(self, m); },
      [=](messages::session_message& m) { on_job(self, m); },
      [=](messages::set_credentials& m) { on_set_credentials(self, m); },
      [=](supervision::child_started_atom, const std::string& key, const caf::actor& set) {
        self->state.sets.on_started(self, key, set);
      },
      [=](supervision::child_down_atom, const std::string& key, const caf::actor_addr& set) {
        self->state.sets.on_down(key, set);
      },
      [=](supervision::child_gone_atom, const std::string& key, const caf::actor_addr& set) {
        self->state.sets.on_gone(key, set);
      },
  };
}

}  // namespace

controller_actor spawn_controller(caf::actor_system& sys, controller_config cfg) {
  return caf::actor_cast<controller_actor>(sys.spawn(controller_behavior, std::move(cfg)));
}

}  // namespace octorun::controller
