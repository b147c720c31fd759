#include "actors/runnerset/runnerset_actor.hpp"

#include <spdlog/spdlog.h>

#include <map>
#include <optional>
#include <random>
#include <set>
#include <utility>

#include "actors/kinds.hpp"
#include "actors/runner/children.hpp"
#include "actors/runner/phase.hpp"
#include "actors/runnerset/credentials.hpp"
#include "actors/runnerset/routing.hpp"
#include "actors/runnerset/runner_object.hpp"
#include "actors/runnerset/scale_sets.hpp"
#include "actors/runnerset/scaling.hpp"
#include "actors/runnerset/set_state.hpp"
#include "actors/supervisor/supervisor.hpp"
#include "adapters/common/json.hpp"
#include "adapters/github/auth.hpp"
#include "adapters/github/github_workers.hpp"
#include "adapters/github/scope.hpp"
#include "adapters/resources/naming.hpp"
#include "adapters/resources/parse.hpp"
#include "messages/jobs.hpp"
#include "messages/kube.hpp"

namespace octorun::runnerset {
namespace detail {

using tick_atom = caf::atom_constant<caf::atom("rstick")>;
using scale_down_atom = caf::atom_constant<caf::atom("rsdown")>;  // a scale-down window ended

std::string id(self_ptr self) { return self->state.cfg.ns + "/" + self->state.cfg.name; }

std::string random_suffix(std::mt19937& rng) {
  static constexpr char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";  // as the apiserver's generateName
  std::uniform_int_distribution<std::size_t> pick(0, sizeof alphabet - 2);
  std::string s;
  for (std::size_t i = 0; i < resources::runner_suffix_length; ++i) s.push_back(alphabet[pick(rng)]);
  return s;
}

std::int64_t epoch_seconds(const std::string& rfc3339) {
  std::tm tm{};
  if (strptime(rfc3339.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return 0;
  return static_cast<std::int64_t>(timegm(&tm));
}

std::optional<tracked_runner> track(const kube::object& obj) {
  auto r = resources::parse_runner(*obj.doc);
  if (!r) return std::nullopt;
  tracked_runner t;
  t.view.name = r->metadata.name;
  t.view.phase = runner::parse_phase(r->status.phase).value_or(runner::phase::unset);
  t.view.has_job = r->status.job.has_value() && r->status.job->id != 0;
  t.view.deleting = r->metadata.deleting;
  t.view.pod_ready = r->status.pod_ready;
  const auto* meta = obj.member("metadata");
  t.view.created = meta ? epoch_seconds(json::str(*meta, "creationTimestamp")) : 0;
  t.variant = r->spec.variant;
  t.github_runner_id = r->status.runner_id;
  return t;
}

// ---- credentials -------------------------------------------------------------

void refresh_credentials(self_ptr self) {
  auto& st = self->state;
  if (!st.set || st.credentials_in_flight) return;
  st.credentials_in_flight = true;
  self->request(st.cfg.kube, st.cfg.request_timeout,
                kube::get_request{kinds::secrets(), st.cfg.ns, st.set->spec.credentials_secret_name, ""})
      .then(
          [=](kube::object_result& r) {
            auto& s = self->state;
            s.credentials_in_flight = false;
            auto fail = [&](std::string why) {
              if (why != s.credentials_error)
                spdlog::error("runnerset {}: credentials Secret {}: {}", id(self),
                              s.set->spec.credentials_secret_name, why);
              s.credentials_error = std::move(why);
              reconcile(self);
            };
            s.credentials_gone = !r && r.error().not_found();
            if (!r) return fail(kube::to_string(r.error()));
            if (s.github && std::string(r->resource_version) == s.credentials_version) {
              // A read that failed before (a blip) must not leave the condition False.
              if (!s.credentials_error.empty()) {
                s.credentials_error.clear();
                reconcile(self);
              }
              return;
            }
            auto creds = read_credentials(*r->doc);
            if (!creds) return fail(creds.error());
            auto target = github::parse_config_url(s.set->spec.scope_url);
            if (!target) return fail("spec.scopeURL: " + target.error());
            github::rest_options opts;
            opts.api_base = target->api_base;
            opts.where = target->where;
            opts.call.user_agent = s.cfg.user_agent;
            opts.call.tls = s.cfg.github_tls;
            if (auto* pat = std::get_if<pat_credentials>(&*creds)) {
              opts.auth = github::pat_auth(pat->token);
            } else {
              const auto& app = std::get<app_credentials>(*creds);
              opts.auth =
                  github::app_auth({app.app_id, app.installation_id, app.private_key_pem, target->api_base});
            }
            if (s.github) caf::anon_send_exit(s.github, caf::exit_reason::user_shutdown);
            // Under the Listener intake the runners' calls go to the scale set:
            // one REST worker (credential checks) is enough.
            s.github = s.owned->rest =
                github::spawn_rest_pool(self->system(), opts, listening(s) ? 1 : s.cfg.github_workers);
            github::scaleset_options scale_sets;  // its client is spawned when first needed
            scale_sets.config_url = s.set->spec.scope_url;
            scale_sets.auth = opts.auth;
            scale_sets.call = opts.call;
            start_scale_set_admin(self, std::move(scale_sets));
            s.credentials_version = std::string(r->resource_version);
            s.credentials_error.clear();
            spdlog::info("runnerset {}: GitHub credentials loaded for {}", id(self), s.set->spec.scope_url);
            reconcile(self);
          },
          [=](caf::error& e) {
            self->state.credentials_in_flight = false;
            spdlog::warn("runnerset {}: reading credentials: {}", id(self), self->system().render(e));
          });
}

// ---- scaling -----------------------------------------------------------------

void create_runner(self_ptr self, const resources::effective_variant& v) {
  auto& st = self->state;
  auto suffix = random_suffix(st.rng);
  auto name = resources::runner_name(st.set->metadata.name, v.name, suffix);
  st.creating[name] = v.name;
  spdlog::debug("runnerset {}: creating Runner {}", id(self), name);
  self->request(st.cfg.kube, st.cfg.request_timeout,
                kube::create_request{kinds::runners(), st.cfg.ns, runner_json(*st.set, v, suffix)})
      .then(
          [=](kube::object_result& r) {
            if (r) return;  // the watch brings it
            self->state.creating.erase(name);
            if (!r.error().already_exists())
              spdlog::warn("runnerset {}: creating Runner {}: {}", id(self), name,
                           kube::to_string(r.error()));
          },
          [=](caf::error& e) {
            self->state.creating.erase(name);
            spdlog::warn("runnerset {}: creating Runner {}: {}", id(self), name, self->system().render(e));
          });
}

void delete_runner(self_ptr self, const std::string& name) {
  auto& st = self->state;
  st.removing.insert(name);
  self->request(st.cfg.kube, st.cfg.request_timeout,
                kube::delete_request{kinds::runners(), st.cfg.ns, name, {}})
      .then(
          [=](kube::object_result& r) {
            auto& s = self->state;
            s.removing.erase(name);
            // Deleted (or going, behind its finalizer): known now, before the
            // watch says so, so the next reconcile does not delete it again.
            if (auto it = s.runners.find(name); it != s.runners.end() && (r || r.error().not_found()))
              it->second.view.deleting = true;
            if (!r && !r.error().not_found())
              spdlog::warn("runnerset {}: deleting Runner {}: {}", id(self), name,
                           kube::to_string(r.error()));
          },
          [=](caf::error&) { self->state.removing.erase(name); });
}

bool github_unreachable_for_deletion(self_ptr self) {
  auto& st = self->state;
  const bool unreachable =
      st.set && st.set->metadata.deleting && st.credentials_gone && !st.github && !st.scaleset_options;
  if (unreachable && !std::exchange(st.github_abandoned, true))
    spdlog::warn(
        "runnerset {}: being deleted and its credentials Secret {} is gone: leaving its runner "
        "registrations and scale sets to GitHub",
        id(self), st.set->spec.credentials_secret_name);
  return unreachable;
}

caf::actor runner_github(self_ptr self) {
  // admin() respawns the scale-set pool after a credential change.
  return listening(self->state) ? scale_set_admin(self) : self->state.github;
}

void remove_idle(self_ptr self, const tracked_runner& t) {
  auto& st = self->state;
  const auto name = t.view.name;
  // The status publishes the id after the pod is made; the JIT Secret holds
  // it from the start. A runner can come online (and take a job) before its
  // status says so: only one registered in neither is deleted without asking
  // GitHub (its finalizer still checks its Secret).
  auto secret_id = st.jit_runner_ids.find(name);
  const std::int64_t github_id =
      registered_runner_id(t.github_runner_id, secret_id == st.jit_runner_ids.end() ? 0 : secret_id->second);
  spdlog::info("runnerset {}: scaling down: removing idle runner {} (GitHub runner {})", id(self), name,
               github_id);
  if (github_id == 0) return delete_runner(self, name);  // not registered
  st.removing.insert(name);
  self->request(runner_github(self), st.cfg.request_timeout, github::delete_runner_atom::value, github_id)
      .then(
          [=](github::delete_reply& r) {
            auto& s = self->state;
            s.removing.erase(name);
            if (!r) {
              spdlog::warn("runnerset {}: removing runner {} from GitHub: {}", id(self), name,
                           r.error().describe());
              return;
            }
            if (*r == github::delete_outcome::busy) {
              spdlog::info("runnerset {}: runner {} took a job; keeping it", id(self), name);
              s.busy_until[name] = clock::now() + s.cfg.busy_recheck;
              return;
            }
            route_to_runner(self, name, caf::make_message(runner::removed_from_github_atom::value));
            delete_runner(self, name);
          },
          [=](caf::error& e) {
            self->state.removing.erase(name);
            spdlog::warn("runnerset {}: removing runner {} from GitHub: {}", id(self), name,
                         self->system().render(e));
          });
}

std::int64_t assigned_jobs(const set_state& st, const std::string& variant) {
  std::int64_t n = 0;
  for (const auto& [job, v] : st.active_jobs) n += v == variant ? 1 : 0;
  return n;
}

void reconcile(self_ptr self) {
  auto& st = self->state;
  if (!st.set) return;
  if (st.set->metadata.deleting) return drain_for_deletion(self);
  if (!has_set_finalizer(st.set_object)) return patch_set_finalizer(self, true);
  if (!st.github) {
    refresh_credentials(self);
    if (!st.credentials_error.empty()) publish_status(self, nullptr, !st.set->spec.variants.empty());
    return;
  }
  auto variants = resources::effective_variants(st.set->spec);
  variant_counts per_variant;
  const auto now = clock::now();
  const bool listener = listening(st);
  for (const auto& v : variants) {
    // Under the Listener intake a variant scales once its scale set is
    // registered (its runners need it for their JIT configuration) and its
    // session has reported statistics (until then demand is unknown, not
    // zero: after a restart nothing is created or removed on a guess).
    const bool registered =
        !listener || (ensure_scale_set(self, v.name, v.runner_labels) && statistics_reported(st, v.name));
    demand d{v.min_runners, v.max_runners, variants.size() == 1 ? st.set->spec.replicas : std::nullopt,
             listener ? assigned_by_statistics(st, v.name) : assigned_jobs(st, v.name)};
    auto desired = registered ? desired_runners(d) : 0;
    std::vector<runner_view> views;
    counts c;
    c.desired = desired;
    c.assigned = d.assigned_jobs;
    c.scale_set_id = scale_set_id(st, v.name);
    if (c.scale_set_id == 0 && listener) {  // not registered yet this run: keep the recorded id
      auto recorded = recorded_scale_sets(st.set->status);
      if (auto it = recorded.find(v.name); it != recorded.end()) c.scale_set_id = it->second;
    }
    for (const auto& [name, t] : st.runners) {
      if (t.variant != v.name) continue;
      c.add(t.view);
      auto view = t.view;
      // In-flight removals and runners GitHub just called busy are not
      // candidates again (a busy runner still holds capacity).
      auto busy = st.busy_until.find(name);
      if (st.removing.count(name) > 0 || (busy != st.busy_until.end() && busy->second > now))
        view.has_job = true;
      view.job_completed = st.job_completed.count(name) > 0;
      views.push_back(std::move(view));
    }
    for (const auto& [name, variant] : st.creating)
      if (variant == v.name && st.runners.count(name) == 0)
        views.push_back({name, runner::phase::unset, true, false, false, 0});  // occupied, not removable
    auto plan = plan_scale(desired, views);
    if (!registered) {
      plan.create = 0;
      plan.remove_idle.clear();
    }
    const auto floor =
        st.scale_down.try_emplace(v.name, st.cfg.scale_down_window).first->second.floor(now, desired);
    if (registered && floor > desired) {
      plan.remove_idle = plan_scale(floor, views).remove_idle;
      if (!std::exchange(st.scale_down_pending, true))
        self->delayed_send(self, st.cfg.scale_down_window, scale_down_atom::value);
    }
    for (std::int32_t i = 0; i < plan.create; ++i) create_runner(self, v);
    for (const auto& name : plan.remove_finished)
      if (st.removing.count(name) == 0) delete_runner(self, name);
    for (const auto& name : plan.remove_idle) remove_idle(self, st.runners.at(name));
    per_variant.emplace_back(v.name, c);
  }
  drain_retired_variants(self, variants, per_variant);
  publish_status(self, &per_variant, !st.set->spec.variants.empty());
}

// ---- events ------------------------------------------------------------------

void route_to_runner(self_ptr self, const std::string& runner, caf::message msg) {
  self->send(self->state.runners_supervisor, supervision::route_atom::value, runner, std::move(msg));
}

// Counts a job as demand on the variant its labels pick.
void add_demand(self_ptr self, const messages::job_info& job) {
  auto& st = self->state;
  if (st.completed_jobs.count(job.job_id) > 0) return;
  if (job.source == messages::job_source::listener) return;  // its statistics are the demand
  if (!st.set) {  // kept until the RunnerSet is read, never dropped
    st.early_demand.push_back(job);
    return;
  }
  auto variants = resources::effective_variants(st.set->spec);
  if (auto v = variant_for_job(variants, job.labels)) st.active_jobs.emplace(job.job_id, variants[*v].name);
}

// Stops what this actor owns: its Runners' actors and its GitHub workers.
void stop_children(self_ptr self) {
  auto& st = self->state;
  if (st.runners_supervisor) caf::anon_send_exit(st.runners_supervisor, caf::exit_reason::user_shutdown);
  if (st.github) caf::anon_send_exit(st.github, caf::exit_reason::user_shutdown);
  if (st.listeners) caf::anon_send_exit(st.listeners, caf::exit_reason::user_shutdown);
  if (st.scaleset_admin) caf::anon_send_exit(st.scaleset_admin, caf::exit_reason::user_shutdown);
}

void on_event(self_ptr self, kube::informer_event& ev) {
  auto& st = self->state;
  if (!ev.obj) return;
  auto kind = json::str(*ev.obj.doc, "kind");
  const bool deleted = ev.type == kube::event_type::deleted;
  if (kind == "RunnerSet") {
    if (deleted) {
      stop_children(self);
      return self->quit();
    }
    auto parsed = resources::parse_runnerset(*ev.obj.doc);
    if (!parsed) {
      spdlog::error("runnerset {}: cannot read the RunnerSet: {}", id(self), parsed.error().front().message);
      return;
    }
    const bool credentials_changed =
        !st.set || st.set->spec.credentials_secret_name != parsed->spec.credentials_secret_name ||
        st.set->spec.scope_url != parsed->spec.scope_url || st.set->spec.intake != parsed->spec.intake;
    st.set_object = std::move(ev.obj);
    st.set = std::move(*parsed);
    for (const auto& job : std::exchange(st.early_demand, {})) add_demand(self, job);
    if (credentials_changed) {
      st.credentials_version.clear();
      refresh_credentials(self);
    }
    return reconcile(self);
  }
  if (kind == "Runner") {
    std::string name(ev.obj.name);
    st.creating.erase(name);
    if (deleted) {
      st.runners.erase(name);
      st.busy_until.erase(name);
      st.job_completed.erase(name);
      st.jit_runner_ids.erase(name);
      self->send(st.runners_supervisor, supervision::retire_atom::value, name);
    } else if (auto t = track(ev.obj)) {
      st.runners[name] = std::move(*t);
      route_to_runner(self, name, caf::make_message(std::move(ev)));
    }
    return reconcile(self);
  }
  if (kind == "Pod" || kind == "Secret") {
    std::string runner(ev.obj.label(resources::label_runner));
    // Only to Runners we know: a late event must not resurrect a retired actor.
    if (st.runners.count(runner) == 0) return;
    if (kind == "Secret" && !deleted)
      if (auto jit = runner::read_jit_secret(*ev.obj.doc); jit && jit->runner_id != 0)
        st.jit_runner_ids[runner] = jit->runner_id;
    route_to_runner(self, runner, caf::make_message(std::move(ev)));
  }
}

template <class Job>
void on_demand(self_ptr self, const Job& m) {
  add_demand(self, m.job);
  reconcile(self);
}

template <class Reply, class... Ts>
caf::result<Reply> forward_to_github(self_ptr self, Ts... xs) {
  auto& st = self->state;
  auto target = runner_github(self);
  if (!target)
    return Reply{
        unexpected{github::error{github::error_kind::unauthorized,
                                 0,
                                 "the RunnerSet's GitHub credentials are not loaded: " + st.credentials_error,
                                 {},
                                 0}}};
  auto rp = self->make_response_promise<Reply>();
  self->request(target, st.cfg.request_timeout, std::move(xs)...)
      .then([=](Reply& r) mutable { rp.deliver(std::move(r)); },
            [=](caf::error& e) mutable { rp.deliver(e); });
  return rp;
}

caf::behavior runnerset_behavior(self_ptr self, runnerset_actor_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  auto runner_defaults = st.cfg.runner_defaults;
  auto kube = st.cfg.kube;
  auto ns = st.cfg.ns;
  auto me = caf::actor_cast<caf::actor>(self);
  st.runners_supervisor = supervision::spawn_supervisor(
      self->system(), "runners of " + ns + "/" + st.cfg.name,
      [=](caf::local_actor* parent, const std::string& name) {
        auto c = runner_defaults;
        c.ns = ns;
        c.name = name;
        c.kube = kube;
        c.github = me;  // GitHub calls go through the set, to its current credentials
        return runner::spawn_runner(parent, c);
      });
  // The Runner actors die with the set's actor, however it ends (a crash
  // restarts them all from the watches' state).
  spawn_listener_supervisor(self);
  st.owned->runners = st.runners_supervisor;
  // However the actor ends (a crash too: the supervisor above restarts it
  // from the watches' state), its Runner actors, listeners and GitHub
  // workers end with it; a leftover listener would hold its session.
  self->attach_functor([owned = st.owned](const caf::error&) {
    for (const auto& a : {owned->runners, owned->rest, owned->scale_sets, owned->listeners})
      if (a) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  });
  self->set_exit_handler([=](caf::exit_msg& em) {
    stop_children(self);
    self->quit(em.reason);
  });
  self->delayed_send(self, st.cfg.resync, tick_atom::value);
  return caf::message_handler{
      [=](kube::informer_event& ev) { on_event(self, ev); },
      [=](kube::informer_synced&) {},
      [=](messages::job_available& m) { on_demand(self, m); },
      [=](messages::job_assigned& m) { on_demand(self, m); },
      [=](messages::job_started& m) {
        auto& s = self->state;
        if (s.completed_jobs.count(m.job.job_id) == 0) {
          auto runner = s.runners.find(m.runner_name);
          if (runner != s.runners.end())
            s.active_jobs[m.job.job_id] = runner->second.variant;
          else
            add_demand(self, m.job);  // a runner we have not seen yet: count the job by its labels
        }
        // The Runner's actor promotes it (or finds it gone and stands down).
        route_to_runner(self, m.runner_name, caf::make_message(m));
        reconcile(self);
      },
      [=](messages::job_completed& m) {
        auto& s = self->state;
        s.active_jobs.erase(m.job.job_id);
        std::erase_if(s.early_demand, [&](const messages::job_info& j) { return j.job_id == m.job.job_id; });
        s.completed_jobs[m.job.job_id] = clock::now();
        if (s.runners.count(m.runner_name) > 0) {
          // Its one job is over: it stops holding capacity now, as the job
          // stops counting as demand just above, not once its phase lands.
          // (The listener's demand is its statistics, which move on their own.)
          if (m.job.source == messages::job_source::webhook) s.job_completed.insert(m.runner_name);
          route_to_runner(self, m.runner_name, caf::make_message(m));
        }
        reconcile(self);
      },
      [=](reconcile_atom) { reconcile(self); },
      [=](scale_down_atom) {
        self->state.scale_down_pending = false;
        reconcile(self);
      },
      [=](tick_atom) {
        auto& s = self->state;
        auto horizon = clock::now() - std::chrono::hours(1);
        std::erase_if(s.completed_jobs, [&](const auto& kv) { return kv.second < horizon; });
        std::erase_if(s.busy_until, [&](const auto& kv) { return kv.second < clock::now(); });
        refresh_credentials(self);  // picks up a rotated Secret
        reconcile(self);
        self->delayed_send(self, s.cfg.resync, tick_atom::value);
      },
      // GitHub requests of the Runner actors, answered by the current pool.
      [=](github::jit_config_atom a, github::jit_request& req) -> caf::result<github::jit_reply> {
        if (listening(self->state)) return scale_set_jit(self, req);
        return forward_to_github<github::jit_reply>(self, a, std::move(req));
      },
      [=](github::delete_runner_atom a, std::int64_t runner_id) -> caf::result<github::delete_reply> {
        if (github_unreachable_for_deletion(self))
          return github::delete_reply{github::delete_outcome::not_found};
        return forward_to_github<github::delete_reply>(self, a, runner_id);
      },
  }
      .or_else(listener_handlers(self));
}

}  // namespace detail

caf::actor spawn_runnerset(caf::local_actor* parent, runnerset_actor_config cfg) {
  return parent->spawn(detail::runnerset_behavior, std::move(cfg));
}

caf::actor spawn_runnerset(caf::actor_system& sys, runnerset_actor_config cfg) {
  return sys.spawn(detail::runnerset_behavior, std::move(cfg));
}

}  // namespace octorun::runnerset
