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

namespace octorun::runnerset::detail {
namespace {

std::string host_name() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "octorun";
  return host;
}

// The scale-set workers for this set's registration, JIT and removal calls
// (a pool, so the runners of many variants do not queue behind one JIT
// round trip), spawned on first use once the credentials are loaded.
}  // namespace

caf::actor scale_set_admin(self_ptr self) {
  auto& st = self->state;
  if (!st.scaleset_admin && st.scaleset_options) {
    // One worker per variant up to 8 (sized when spawned): a burst on every
    // variant at once gets its JIT configurations side by side, as separate
    // RunnerSets would.
    const std::size_t variants = st.set ? st.set->spec.variants.size() : 1;
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

namespace {

caf::actor admin(self_ptr self) { return scale_set_admin(self); }

void resolve_runner_group(self_ptr self) {
  auto& st = self->state;
  if (st.runner_group_in_flight || !admin(self)) return;
  st.runner_group_in_flight = true;
  const auto group = st.set->spec.runner_group.empty() ? std::string("Default") : st.set->spec.runner_group;
  self->request(admin(self), st.cfg.request_timeout, github::runner_group_atom::value, group)
      .then(
          [=](github::group_reply& r) {
            self->state.runner_group_in_flight = false;
            if (!r) {
              spdlog::warn("runnerset {}: runner group {}: {}", id(self), group, r.error().describe());
              return;
            }
            self->state.runner_group_id = r->id;
            reconcile(self);
          },
          [=](caf::error& e) {
            self->state.runner_group_in_flight = false;
            spdlog::warn("runnerset {}: runner group {}: {}", id(self), group, self->system().render(e));
          });
}

bool same_labels(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

}  // namespace

bool listening(const set_state& st) {
  return st.set && st.set->spec.intake == resources::intake_mode::listener;
}

void start_scale_set_admin(self_ptr self, github::scaleset_options options) {
  auto& st = self->state;
  st.scaleset_options = std::move(options);
  // New credentials: a fresh client (its admin token came from the old ones).
  if (st.scaleset_admin) caf::anon_send_exit(st.scaleset_admin, caf::exit_reason::user_shutdown);
  st.scaleset_admin = nullptr;
  st.runner_group_id.reset();
}

std::int64_t scale_set_id(const set_state& st, const std::string& variant) {
  auto it = st.scale_sets.find(variant);
  return it == st.scale_sets.end() ? 0 : it->second.id;
}

std::int64_t assigned_by_statistics(const set_state& st, const std::string& variant) {
  auto it = st.scale_sets.find(variant);
  return it == st.scale_sets.end() ? 0 : it->second.statistics.total_assigned_jobs;
}

bool statistics_reported(const set_state& st, const std::string& variant) {
  auto it = st.scale_sets.find(variant);
  return it != st.scale_sets.end() && it->second.reported;
}

bool ensure_scale_set(self_ptr self, const std::string& variant, const std::vector<std::string>& labels) {
  auto& st = self->state;
  auto& entry = st.scale_sets[variant];
  const bool registered = entry.id != 0;
  if (registered && !entry.listening) {
    self->send(st.listeners, supervision::ensure_atom::value, variant);
    entry.listening = true;
  }
  if (entry.in_flight || !admin(self) || clock::now() < entry.retry_at) return registered;
  if (!st.runner_group_id) {
    resolve_runner_group(self);
    return registered;
  }
  github::scale_set wanted;
  wanted.name = scale_set_name(st.set->metadata.name, variant);
  wanted.runner_group_id = *st.runner_group_id;
  wanted.labels = labels;
  if (std::find(labels.begin(), labels.end(), wanted.name) == labels.end())
    wanted.labels.push_back(wanted.name);  // runs-on: <scale set name> works too
  // A registered scale set is looked at again only when the variant's labels
  // changed (it is then updated in place: same id, same session).
  if (registered && same_labels(entry.labels, wanted.labels)) return true;
  entry.in_flight = true;
  auto done = [=](const github::scale_set& s, const char* how) {
    auto& e = self->state.scale_sets[variant];
    e.in_flight = false;
    e.id = s.id;
    e.labels = wanted.labels;
    e.failures = 0;
    spdlog::info("runnerset {}: {} scale set {} (id {})", id(self), how, s.name, s.id);
    reconcile(self);
  };
  auto failed = [=](const std::string& what, const std::string& why) {
    auto& e = self->state.scale_sets[variant];
    e.in_flight = false;
    // Capped exponential backoff: a wrong runner group or a rate limit is
    // not hammered on every event.
    const auto delay = std::chrono::seconds(1) * (1 << std::min(e.failures++, 6));
    e.retry_at = clock::now() + delay;
    self->delayed_send(self, delay, reconcile_atom::value);
    spdlog::warn("runnerset {}: {} scale set {}: {}; again in {} s", id(self), what, wanted.name, why,
                 std::chrono::duration_cast<std::chrono::seconds>(delay).count());
  };
  auto render = [=](const caf::error& e) { return self->system().render(e); };
  self->request(admin(self), st.cfg.request_timeout, github::find_scale_set_atom::value,
                wanted.runner_group_id, wanted.name)
      .then(
          [=](github::maybe_scale_set_reply& found) {
            if (!found) return failed("finding", found.error().describe());
            const bool exists = found->has_value();
            if (exists && same_labels((*found)->labels, wanted.labels)) return done(**found, "found");
            auto reply = [=](github::scale_set_reply& r) {
              if (!r) return failed(exists ? "updating" : "registering", r.error().describe());
              done(*r, exists ? "updated" : "registered");
            };
            auto error = [=](caf::error& e) { failed("registering", render(e)); };
            if (exists)
              self->request(admin(self), self->state.cfg.request_timeout,
                            github::update_scale_set_atom::value, (*found)->id, wanted)
                  .then(reply, error);
            else
              self->request(admin(self), self->state.cfg.request_timeout,
                            github::create_scale_set_atom::value, wanted)
                  .then(reply, error);
          },
          [=](caf::error& e) { failed("finding", render(e)); });
  return registered;
}

bool delete_scale_set(self_ptr self, const std::string& variant, std::int64_t ss) {
  auto& st = self->state;
  if (st.deleted_scale_sets.count(ss) > 0) return true;
  stop_listener(self, variant);
  if (github_unreachable_for_deletion(self)) return true;
  if (st.scale_set_deletions.count(ss) > 0 || !admin(self)) return false;
  st.scale_set_deletions.insert(ss);
  self->request(admin(self), st.cfg.request_timeout, github::delete_scale_set_atom::value, ss)
      .then(
          [=](github::ok_reply& r) {
            auto& s = self->state;
            s.scale_set_deletions.erase(ss);
            if (!r && r.error().kind != github::error_kind::not_found) {
              spdlog::warn("runnerset {}: deleting scale set {}: {}", id(self), ss, r.error().describe());
              return;
            }
            spdlog::info("runnerset {}: deleted scale set {} of variant '{}'", id(self), ss, variant);
            s.deleted_scale_sets.insert(ss);
            if (auto it = s.scale_sets.find(variant); it != s.scale_sets.end() && it->second.id == ss)
              s.scale_sets.erase(it);
            reconcile(self);
          },
          [=](caf::error& e) {
            self->state.scale_set_deletions.erase(ss);
            spdlog::warn("runnerset {}: deleting scale set {}: {}", id(self), ss, self->system().render(e));
          });
  return false;
}

void on_statistics(self_ptr self, const messages::job_statistics& stats) {
  auto& st = self->state;
  for (auto& [variant, entry] : st.scale_sets) {
    if (entry.id != stats.scale_set_id) continue;
    const bool changed = !entry.reported || entry.statistics.total_assigned_jobs != stats.total_assigned_jobs;
    entry.statistics = stats;
    entry.reported = true;
    if (changed) reconcile(self);
    return;
  }
}

void stop_listener(self_ptr self, const std::string& variant) {
  auto& st = self->state;
  auto it = st.scale_sets.find(variant);
  if (it == st.scale_sets.end() || !it->second.listening) return;
  self->send(st.listeners, supervision::retire_atom::value, variant);
  it->second.listening = false;
}

void stop_listeners(self_ptr self) {
  for (const auto& [variant, entry] : self->state.scale_sets) stop_listener(self, variant);
}

caf::result<github::jit_reply> scale_set_jit(self_ptr self, const github::jit_request& req) {
  auto& st = self->state;
  std::string variant;
  if (auto r = st.runners.find(req.name); r != st.runners.end())
    variant = r->second.variant;
  else if (auto c = st.creating.find(req.name); c != st.creating.end())
    variant = c->second;
  const auto ss = scale_set_id(st, variant);
  if (ss == 0 || !admin(self))
    return github::jit_reply{
        unexpected{github::error{github::error_kind::server_error,
                                 0,
                                 "the scale set of variant '" + variant + "' is not registered yet",
                                 {},
                                 0}}};
  auto rp = self->make_response_promise<github::jit_reply>();
  self->request(admin(self), st.cfg.request_timeout, github::jit_config_atom::value, ss, req.name)
      .then(
          [=](github::scaleset_jit_reply& r) mutable {
            if (!r) {
              if (r.error().kind == github::error_kind::not_found) {
                // The scale set was deleted on GitHub: register it again (the
                // listener finds its session gone and restarts on the new id).
                auto& e = self->state.scale_sets[variant];
                if (e.id == ss) e = {};
                reconcile(self);
              }
              rp.deliver(github::jit_reply{unexpected{r.error()}});
              return;
            }
            github::jit_config out;
            out.registered.id = r->runner.id;
            out.registered.name = r->runner.name;
            out.registered.ephemeral = true;
            out.encoded_jit_config = std::move(r->encoded_jit_config);
            rp.deliver(github::jit_reply{std::move(out)});
          },
          [=](caf::error& e) mutable { rp.deliver(e); });
  return rp;
}

void spawn_listener_supervisor(self_ptr self) {
  auto& st = self->state;
  auto me = caf::actor_cast<caf::actor>(self);
  auto set_id = id(self);
  auto timeout = st.cfg.request_timeout;
  st.listeners = st.owned->listeners = supervision::spawn_supervisor(
      self->system(), "listeners of " + set_id, [=](caf::local_actor* parent, const std::string& variant) {
        return listener::spawn_listener(parent, {set_id, variant, me, timeout});
      });
}

caf::message_handler listener_handlers(self_ptr self) {
  return {
      [=](messages::job_statistics& stats) { on_statistics(self, stats); },
      [=](listener::listener_setup_atom, const std::string& variant) -> listener::listener_setup_reply {
        auto& st = self->state;
        if (!listening(st)) return unexpected{std::string("the RunnerSet's intake is not Listener")};
        if (!st.scaleset_options) return unexpected{"GitHub credentials not loaded: " + st.credentials_error};
        const auto ss = scale_set_id(st, variant);
        if (ss == 0) return unexpected{"the scale set of variant '" + variant + "' is not registered"};
        std::int32_t max_runners = 0;
        for (const auto& v : resources::effective_variants(st.set->spec))
          if (v.name == variant) max_runners = v.max_runners;
        return listener::listener_setup{ss, host_name() + "/" + id(self), *st.scaleset_options, max_runners};
      },
  };
}

}  // namespace octorun::runnerset::detail
