#include "actors/controller/controller.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "actors/controller/unrouted.hpp"
#include "actors/kinds.hpp"
#include "actors/metrics/event_metrics.hpp"
#include "actors/runnerset/routing.hpp"
#include "actors/supervisor/supervisor.hpp"
#include "adapters/common/json.hpp"
#include "adapters/common/strings.hpp"
#include "adapters/github/scope.hpp"
#include "adapters/kube/informer.hpp"
#include "adapters/kube/protocol.hpp"
#include "messages/jobs.hpp"
#include "model/naming.hpp"
#include "model/parse.hpp"

namespace octorun::controller {
namespace {

struct controller_state {
  controller_config cfg;
  caf::actor kube;
  caf::actor events;  // kube::spawn_event_recorder, shared by the Runner actors
  caf::actor sets;    // supervisor of the RunnerSet actors, keyed "ns/name"
  std::vector<caf::actor> informers;
  // The Pod and Secret informers of each watched namespace, until both have
  // listed (then its Runner informer starts): informer -> namespace.
  std::map<caf::actor_addr, std::string> children_listing;
  std::map<std::string, model::runnerset> known_sets;  // for routing demand
  std::map<std::string, std::string> runner_set;       // runner name -> "ns/set"
  static constexpr const char* name = "controller";
};

using self_ptr = caf::stateful_actor<controller_state>*;

void route(self_ptr self, const std::string& set_key, caf::message msg) {
  self->send(self->state.sets, supervision::route_atom::value, set_key, std::move(msg));
}

void on_event(self_ptr self, kube::informer_event& ev) {
  auto& st = self->state;
  if (!ev.obj) return;
  auto kind = json::str(*ev.obj.doc, "kind");
  if (st.cfg.observer && (kind == "RunnerSet" || kind == "Runner")) self->send(st.cfg.observer, ev);
  const bool deleted = ev.type == kube::event_type::deleted;
  std::string ns(ev.obj.namespace_);
  std::string set_name;
  if (kind == "RunnerSet") {
    set_name = std::string(ev.obj.name);
    auto key = ns + "/" + set_name;
    if (deleted) {
      if (st.known_sets.erase(key) == 0) return;  // never started: nothing to stop
    } else if (auto parsed = model::parse_runnerset(*ev.obj.doc)) {
      st.known_sets[key] = std::move(*parsed);
    }
  } else {
    set_name = std::string(ev.obj.label(model::label_runnerset));
    if (set_name.empty()) return;  // not made by a RunnerSet
    if (kind == "Runner") {
      if (deleted)
        st.runner_set.erase(std::string(ev.obj.name));
      else
        st.runner_set[std::string(ev.obj.name)] = ns + "/" + set_name;
    }
  }
  auto key = ns + "/" + set_name;
  // A deletion for a set we do not know (its own deletion already seen, or a
  // late Pod/Secret event after the set went) must not spawn an actor for it.
  if (deleted && kind != "RunnerSet" && st.known_sets.count(key) == 0) return;
  route(self, key, caf::make_message(std::move(ev)));
}

// Queued demand goes to the first RunnerSet (by namespace/name) whose scope
// serves the repository and one of whose variants carries the job's labels.
std::optional<std::string> set_for_demand(const controller_state& st, const messages::job_info& job) {
  for (const auto& [key, set] : st.known_sets) {
    if (set.metadata.deleting || !scope_serves(set.spec.scope_url, job.repository)) continue;
    if (runnerset::variant_for_job(model::effective_variants(set.spec), job.labels)) return key;
  }
  return std::nullopt;
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

std::optional<std::string> set_by_runner_name(const controller_state& st, const std::string& runner) {
  for (const auto& [key, set] : st.known_sets)
    for (const auto& v : model::effective_variants(set.spec)) {
      auto prefix = model::runner_name_prefix(set.metadata.name, v.name);
      if (runner.size() == prefix.size() + model::runner_suffix_length && runner.starts_with(prefix))
        return key;
    }
  return std::nullopt;
}

template <class Demand>
void on_demand(self_ptr self, const Demand& m) {
  if (auto key = set_for_demand(self->state, m.job)) return route(self, *key, caf::make_message(m));
  reject_demand(m.job, why_unrouted(self->state.known_sets, m.job));
  if (auto& metrics = self->state.cfg.runnerset_defaults.metrics) metrics->job_unmatched();
}

// An informer of `res` in `ns` (all namespaces: ""), delivering to `self`.
caf::actor watch(self_ptr self, const kube::resource& res, const std::string& ns,
                 const std::string& selector) {
  auto& st = self->state;
  kube::informer_options io;
  io.res = res;
  io.ns = ns;
  io.label_selector = selector;
  auto inf = kube::spawn_informer(self->system(), st.cfg.kube, st.cfg.kube_options, io);
  self->send(inf, kube::subscribe_atom::value, caf::actor_cast<caf::actor>(self));
  st.informers.push_back(inf);
  return inf;
}

caf::behavior controller_behavior(self_ptr self, controller_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.kube = kube::spawn_request_pool(self->system(), st.cfg.kube, st.cfg.kube_options, st.cfg.kube_workers);
  if (st.cfg.record_events)
    st.events = kube::spawn_event_recorder(self->system(), st.cfg.kube, st.cfg.kube_options,
                                           st.cfg.reporting_controller, st.cfg.reporting_instance);
  auto defaults = st.cfg.runnerset_defaults;
  defaults.kube = st.kube;
  defaults.runner_defaults.events = st.events;
  st.sets = supervision::spawn_supervisor(self->system(), "runnersets",
                                          [defaults](caf::local_actor* parent, const std::string& key) {
                                            auto c = defaults;
                                            auto slash = key.find('/');
                                            c.ns = key.substr(0, slash);
                                            c.name = key.substr(slash + 1);
                                            return runnerset::spawn_runnerset(parent, c);
                                          });
  for (const auto& ns : st.cfg.namespaces.empty() ? std::vector<std::string>{""} : st.cfg.namespaces) {
    watch(self, kinds::runnersets(), ns, "");
    // A Runner's actor judges on its first event whether its pod is gone and
    // whether it still needs a JIT configuration: its Pods and Secrets must
    // be known by then. So a namespace's Runners are watched once its Pods
    // and Secrets have listed (a new leader's informers would list in any
    // order; a Runner seen before its pod was marked Failed while it ran its
    // job). Relists keep their caches, so this holds after a 410 too.
    for (const auto& res : {kinds::pods(), kinds::secrets()})
      st.children_listing[watch(self, res, ns, std::string(model::label_runnerset)).address()] = ns;
  }
  self->set_exit_handler([=](caf::exit_msg& em) {
    auto& s = self->state;
    for (auto& inf : s.informers) self->send_exit(inf, em.reason);
    self->send_exit(s.sets, em.reason);
    self->send_exit(s.kube, em.reason);
    if (s.events) self->send_exit(s.events, em.reason);
    self->quit(em.reason);
  });
  std::string where;
  for (const auto& ns : st.cfg.namespaces) where += (where.empty() ? "" : ", ") + ns;
  spdlog::info("controller: watching RunnerSets in {}", where.empty() ? "every namespace" : where);
  return {
      [=](kube::informer_event& ev) { on_event(self, ev); },
      [=](kube::informer_synced& s) {
        spdlog::info("controller: {} synced ({} objects)", s.source, s.count);
        auto& listing = self->state.children_listing;
        auto it = listing.find(caf::actor_cast<caf::actor_addr>(self->current_sender()));
        if (it == listing.end()) return;
        const auto ns = it->second;
        listing.erase(it);
        const bool children_listed =
            std::none_of(listing.begin(), listing.end(), [&](const auto& l) { return l.second == ns; });
        if (children_listed) watch(self, kinds::runners(), ns, std::string(model::label_runnerset));
      },
      [=](messages::job_available& m) { on_demand(self, m); },
      [=](messages::job_assigned& m) { on_demand(self, m); },
      [=](messages::job_started& m) {
        auto owner = self->state.runner_set.find(m.runner_name);
        if (owner != self->state.runner_set.end()) return route(self, owner->second, caf::make_message(m));
        // Not seen yet (a restart before the watches synced): our runner
        // names say which set and variant made them. A start on a runner
        // that is not ours at all (another pool, a hosted runner) is ignored.
        if (auto key = set_by_runner_name(self->state, m.runner_name))
          route(self, *key, caf::make_message(m));
      },
      [=](messages::job_completed& m) {
        // Every set drops the job from its demand; the owner also ends the runner.
        for (const auto& [key, set] : self->state.known_sets) route(self, key, caf::make_message(m));
      },
  };
}

}  // namespace

bool scope_serves(const std::string& scope_url, const std::string& repository) {
  auto target = github::parse_config_url(scope_url);
  if (!target) return false;
  auto slash = repository.find('/');
  if (slash == std::string::npos) return false;
  const auto owner = ascii_lower(repository.substr(0, slash));
  switch (target->where.kind) {
    case github::scope_kind::enterprise:
      return true;
    case github::scope_kind::organization:
      return ascii_lower(target->where.owner) == owner;
    case github::scope_kind::repository:
      return ascii_lower(target->where.owner + "/" + target->where.repository) == ascii_lower(repository);
  }
  return false;
}

caf::actor spawn_controller(caf::actor_system& sys, controller_config cfg) {
  return sys.spawn(controller_behavior, std::move(cfg));
}

}  // namespace octorun::controller
