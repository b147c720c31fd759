// The RunnerSet actor's Listener intake: one GitHub scale set per effective
// variant (registered, updated, deleted), one supervised listener per
// registered scale set, the statistics they report as demand, and the
// scale-set calls its Runners make (JIT configuration, removal).
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

#include "actors/listener/listener_actor.hpp"
#include "actors/runnerset/scale_sets.hpp"
#include "actors/runnerset/set_state.hpp"
#include "actors/supervisor/supervisor.hpp"
#include "adapters/github/github_workers.hpp"
#include "common/backoff.hpp"

namespace octorun::runnerset::detail {
namespace {

std::string host_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "octorun";
  return host;
}

}  // namespace

// The scale-set workers for this set's registration, JIT and removal calls
// (a pool, so the runners of many variants do not queue behind one JIT
// round trip), spawned on first use once the credentials are loaded.
caf::actor scale_set_admin(self_ptr self) {
  auto& st = self->state;
  if (st.cfg.github && st.scaleset_options) return st.cfg.github;
  if (!st.scaleset_admin && st.scaleset_options) {
    // One worker per variant up to 8 (sized when spawned): a burst on every
    // variant at once gets its JIT configurations side by side, as separate
    // RunnerSets would.
    const std::size_t variants = st.world.set ? st.world.set->spec.variants.size() : 1;
    auto worker =
        github::spawn_scaleset_pool(self->system(), *st.scaleset_options,
                                    std::max(st.cfg.github_workers, std::min<std::size_t>(variants, 8)));
    if (!worker) {
      spdlog::error("runnerset {}: scale-set client: {}", id(self), worker.error());
      return {};
    }
    st.scaleset_admin = *worker;
    st.owned->scale_sets = st.scaleset_admin;
  }
  return st.scaleset_admin;
}

caf::actor runner_github(self_ptr self) {
  // scale_set_admin() respawns the scale-set pool after a credential change.
  return listening(self->state) ? scale_set_admin(self) : self->state.github;
}

void start_scale_set_admin(self_ptr self, github::scaleset_options options) {
  auto& st = self->state;
  st.scaleset_options = std::move(options);
  st.world.scale_set_client = true;
  // New credentials: a fresh client (its admin token came from the old ones).
  if (st.scaleset_admin) caf::anon_send_exit(st.scaleset_admin, caf::exit_reason::user_shutdown);
  st.scaleset_admin = nullptr;
  st.world.runner_group_id.reset();
}

void resolve_runner_group(self_ptr self) {
  auto& st = self->state;
  const auto group =
      st.world.set->spec.runner_group.empty() ? std::string("Default") : st.world.set->spec.runner_group;
  auto failed = [=](const std::string& why) {
    spdlog::warn("runnerset {}: runner group {}: {}", id(self), group, why);
  };
  request_in_flight<github::group_reply>(
      self, {action_kind::resolve_runner_group, ""}, scale_set_admin(self),
      [=](github::group_reply& r) {
        note_github_answer(self, r ? nullptr : &r.error(), github_call_target::scope);
        if (!r) return failed(r.error().describe());
        self->state.world.runner_group_id = r->id;
        mark_dirty(self);
      },
      failed, github::runner_group_atom::value, group);
}

void register_scale_set(self_ptr self, const action& a) {
  const auto variant = a.subject;
  github::scale_set wanted;
  wanted.name = a.scale_set_name;
  wanted.runner_group_id = a.id;
  wanted.labels = a.labels;
  const flight_key key{action_kind::register_scale_set, variant};
  auto done = [=](const github::scale_set& s, const char* how) {
    // Taken by an older set while the call was out: that set's, not this one's.
    if (self->state.world.taken_scale_sets.count(variant) > 0) return mark_dirty(self);
    auto& e = self->state.world.scale_sets[variant];
    e.id = s.id;
    e.labels = wanted.labels;
    e.failures = 0;
    e.error.clear();
    spdlog::info("runnerset {}: {} scale set {} (id {})", id(self), how, s.name, s.id);
    mark_dirty(self);
  };
  auto failed = [=](const std::string& what, const std::string& why) {
    auto& e = self->state.world.scale_sets[variant];
    // Capped exponential backoff: a wrong runner group or a rate limit is
    // not hammered on every event (plan() wakes the set at retry_at).
    const auto delay =
        exponential_backoff<std::chrono::seconds>{std::chrono::seconds(1), std::chrono::seconds(64)}.delay(
            e.failures++);
    e.retry_at = self->clock().now() + delay;
    e.error = what + " scale set " + wanted.name + ": " + why;
    mark_dirty(self);
    spdlog::warn("runnerset {}: {} scale set {}: {}; again in {} s", id(self), what, wanted.name, why,
                 std::chrono::duration_cast<std::chrono::seconds>(delay).count());
  };
  request_in_flight<github::maybe_scale_set_reply>(
      self, key, scale_set_admin(self),
      [=](github::maybe_scale_set_reply& found) {
        note_github_answer(self, found ? nullptr : &found.error(), github_call_target::scope);
        if (!found) return failed("finding", found.error().describe());
        // Taken meanwhile: the scale set found is the holder's, never updated from here.
        if (self->state.world.taken_scale_sets.count(variant) > 0) return mark_dirty(self);
        const bool exists = found->has_value();
        if (exists && !registered_by_the_set((*found)->id, (*found)->labels,
                                             known_scale_set_id(self->state.world, variant),
                                             self->state.world.set->metadata.uid))
          return failed("registering",
                        "a scale set of that name that this RunnerSet did not register "
                        "(another controller's, or another cluster's manager's) is in its "
                        "runner group: this set registers, listens to and deletes nothing "
                        "under the name; rename the set (or the variant), or delete that "
                        "scale set on GitHub");
        if (exists && same_labels((*found)->labels, wanted.labels)) return done(**found, "found");
        auto reply = [=](github::scale_set_reply& r) {
          note_github_answer(self, r ? nullptr : &r.error(), github_call_target::scope);
          if (!r) return failed(exists ? "updating" : "registering", r.error().describe());
          done(*r, exists ? "updated" : "registered");
        };
        auto error = [=](const std::string& why) { failed("registering", why); };
        if (exists)
          request_in_flight<github::scale_set_reply>(self, key, scale_set_admin(self), reply, error,
                                                     github::update_scale_set_atom::value, (*found)->id,
                                                     wanted);
        else
          request_in_flight<github::scale_set_reply>(self, key, scale_set_admin(self), reply, error,
                                                     github::create_scale_set_atom::value, wanted);
      },
      [=](const std::string& why) { failed("finding", why); }, github::find_scale_set_atom::value,
      wanted.runner_group_id, wanted.name);
}

void delete_scale_set(self_ptr self, const std::string& variant, std::int64_t ss) {
  auto failed = [=](const std::string& why) {
    spdlog::warn("runnerset {}: deleting scale set {}: {}", id(self), ss, why);
  };
  request_in_flight<github::ok_reply>(
      self, {action_kind::delete_scale_set, std::to_string(ss)}, scale_set_admin(self),
      [=](github::ok_reply& r) {
        auto& w = self->state.world;
        if (!r && r.error().kind != github::error_kind::not_found) return failed(r.error().describe());
        spdlog::info("runnerset {}: deleted scale set {} of variant '{}'", id(self), ss, variant);
        w.deleted_scale_sets.insert(ss);
        if (auto it = w.scale_sets.find(variant); it != w.scale_sets.end() && it->second.id == ss)
          w.scale_sets.erase(it);
        mark_dirty(self);
      },
      failed, github::delete_scale_set_atom::value, ss);
}

void on_scale_set_names_taken(self_ptr self, std::map<std::string, messages::scale_set_taken> taken) {
  auto& w = self->state.world;
  if (taken == w.taken_scale_sets) return;
  for (const auto& [variant, t] : taken) {
    if (w.taken_scale_sets.count(variant) == 0)
      spdlog::warn("runnerset {}: scale set {} is held by RunnerSet {}; no scale set or listener for it here",
                   id(self), t.scale_set_name, t.holder);
    stop_listener(self, variant);
    w.scale_sets.erase(variant);
  }
  for (const auto& [variant, t] : w.taken_scale_sets)
    if (taken.count(variant) == 0)
      spdlog::info("runnerset {}: scale set {} is free for it now ({} is gone)", id(self), t.scale_set_name,
                   t.holder);
  w.taken_scale_sets = std::move(taken);
  mark_dirty(self);
}

void on_statistics(self_ptr self, const messages::job_statistics& stats) {
  for (auto& [variant, entry] : self->state.world.scale_sets) {
    if (entry.id != stats.scale_set_id) continue;
    const bool changed = !entry.reported || entry.assigned_jobs != stats.total_assigned_jobs ||
                         entry.running_jobs != stats.total_running_jobs;
    entry.assigned_jobs = stats.total_assigned_jobs;
    entry.running_jobs = stats.total_running_jobs;
    entry.reported = true;
    if (changed) mark_dirty(self);
    return;
  }
}

void start_listener(self_ptr self, const std::string& variant) {
  auto& st = self->state;
  auto& entry = st.world.scale_sets[variant];
  if (entry.listening) return;
  caf::anon_send(st.listeners, supervision::ensure_atom::value, variant);
  entry.listening = true;
}

void stop_listener(self_ptr self, const std::string& variant) {
  auto& st = self->state;
  auto it = st.world.scale_sets.find(variant);
  if (it == st.world.scale_sets.end() || !it->second.listening) return;
  caf::anon_send(st.listeners, supervision::retire_atom::value, variant);
  it->second.listening = false;
  // (Also when no incarnation runs to say so: one waiting to be restarted.)
  if (st.cfg.metrics) st.cfg.metrics->listener_stopped(st.cfg.ns, st.cfg.name, variant);
}

caf::result<github::jit_reply> scale_set_jit(self_ptr self, const github::jit_request& req) {
  auto& st = self->state;
  const auto variant = variant_of(st.world, req.name);
  const auto ss = scale_set_id(st.world, variant);
  auto admin = scale_set_admin(self);
  if (ss == 0 || !admin)
    return github::jit_reply{
        unexpected{github::error{github::error_kind::not_ready,
                                 0,
                                 "the scale set of variant '" + variant + "' is not registered yet",
                                 {},
                                 0}}};
  auto rp = self->make_response_promise<github::jit_reply>();
  const auto uid = runner_uid(self, req.name);
  self->request(admin, st.cfg.request_timeout, github::jit_config_atom::value, ss, req.name)
      .then(
          [=](github::scaleset_jit_reply& r) mutable {
            note_runner_registration(self, r ? nullptr : &r.error());
            // Its 404: the scale set is gone (registered again below).
            note_github_answer(self, r ? nullptr : &r.error(), github_call_target::object);
            if (!r) {
              note_github_error(self, r.error());
              // A holder in this variant's own scale set (no other set registers there) is the set's.
              note_name_holder(self, req.name, uid, r.error(),
                               r.error().holder && !r.error().holder->other_scale_set);
              if (r.error().kind == github::error_kind::not_found) {
                // The scale set was deleted on GitHub: register it again (the
                // listener finds its session gone and restarts on the new id).
                auto& e = self->state.world.scale_sets[variant];
                if (e.id == ss) e = {};
                mark_dirty(self);
              }
              rp.deliver(github::jit_reply{unexpected{r.error()}});
              return;
            }
            github::jit_config out;
            out.registered.id = r->runner.id;
            out.registered.name = r->runner.name;
            out.registered.ephemeral = true;
            out.encoded_jit_config = std::move(r->encoded_jit_config);
            note_registration(self, req.name, uid, out.registered.id);
            rp.deliver(github::jit_reply{std::move(out)});
          },
          [=](caf::error& e) mutable { rp.deliver(e); });
  return rp;
}

void spawn_listener_supervisor(self_ptr self) {
  auto& st = self->state;
  auto me = caf::actor_cast<protocols::listener_setup_api>(self);
  // Its session belongs to this set: its messages come straight here.
  auto jobs = caf::actor_cast<protocols::job_router>(self);
  auto set_id = id(self);
  auto timeout = st.cfg.request_timeout;
  auto metrics = st.cfg.metrics;
  auto spawn = st.cfg.spawn_listener ? st.cfg.spawn_listener : listener::spawn_listener;
  st.listeners = st.owned->listeners = supervision::spawn_supervisor(
      self->system(), "listeners of " + set_id, [=](caf::local_actor* parent, const std::string& variant) {
        return spawn(parent, {set_id, variant, me, jobs, timeout, metrics});
      });
}

protocols::listener_setup_api::behavior_type listener_handlers(self_ptr self) {
  return {
      [=](protocols::listener_setup_atom, const std::string& variant) -> protocols::listener_setup_reply {
        auto& st = self->state;
        if (!listening(st)) return unexpected{std::string("the RunnerSet's intake is not Listener")};
        if (!st.scaleset_options)
          return unexpected{"GitHub credentials not loaded: " + st.world.credentials_error};
        const auto ss = scale_set_id(st.world, variant);
        if (ss == 0) return unexpected{"the scale set of variant '" + variant + "' is not registered"};
        std::int32_t max_runners = 0;
        for (const auto& v : model::effective_variants(st.world.set->spec))
          if (v.name == variant) max_runners = v.max_runners;
        return protocols::listener_setup{ss, host_name() + "/" + id(self), *st.scaleset_options, max_runners,
                                         session_id(st.world, variant)};
      },
      [=](protocols::listener_session_atom, const std::string& variant, const std::string& session) {
        auto it = self->state.world.scale_sets.find(variant);
        if (it == self->state.world.scale_sets.end() || it->second.session_id == session) return;
        it->second.session_id = session;
        mark_dirty(self);  // the status records it
      },
  };
}

}  // namespace octorun::runnerset::detail
