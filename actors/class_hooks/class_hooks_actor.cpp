#include "actors/class_hooks/class_hooks_actor.hpp"

#include <spdlog/spdlog.h>

#include <map>
#include <utility>

#include "actors/class_hooks/webhook_secrets.hpp"
#include "actors/kinds.hpp"
#include "actors/watched.hpp"
#include "adapters/kube/informer.hpp"
#include "adapters/kube/protocol.hpp"

namespace octorun::class_hooks {
namespace {

using resync_atom = caf::atom_constant<caf::atom("hookresync")>;

struct class_hooks_state {
  class_hooks_config cfg;
  caf::actor kube, informer;
  std::map<std::string, model::runner_class> classes;  // as watched
  std::map<std::string, model::secret_key_ref> refs;   // the classes that name a webhook secret
  std::map<std::string, class_secret> secrets;         // as handed to the intake
  static constexpr const char* name = "class-hooks";
};

using self_ptr = caf::stateful_actor<class_hooks_state>*;

// The intake's copy, and one log line per change of a class's secret.
void publish(self_ptr self, const std::string& class_name, class_secret now) {
  auto& st = self->state;
  auto before = st.secrets.find(class_name);
  const bool changed = before == st.secrets.end() ||
                       static_cast<bool>(before->second) != static_cast<bool>(now) ||
                       (now ? *before->second != *now : before->second.error() != now.error());
  if (!changed) return;
  if (now)
    spdlog::info(
        "webhook intake: RunnerClass {} takes deliveries on its own path, verified with key {} of Secret "
        "{}/{}",
        class_name, st.refs[class_name].key, st.cfg.platform_namespace, st.refs[class_name].name);
  else
    spdlog::warn("webhook intake: RunnerClass {}'s path answers 503 until its webhook secret can be used: {}",
                 class_name, now.error());
  st.secrets.insert_or_assign(class_name, std::move(now));
  st.cfg.secrets->replace(st.secrets);
}

void read_secret(self_ptr self, const std::string& class_name) {
  auto& st = self->state;
  const auto ref = st.refs.at(class_name);
  self->request(st.kube, st.cfg.request_timeout,
                kube::get_request{kinds::secrets(), st.cfg.platform_namespace, ref.name, ""})
      .then(
          [=](kube::object_result& r) {
            auto& s = self->state;
            auto now = s.refs.find(class_name);
            if (now == s.refs.end() || now->second != ref) return;  // changed meanwhile: read again
            secret_read read;
            if (r)
              read.secret = r->doc.get();
            else if (r.error().not_found())
              read.not_found = true;
            else
              read.error = kube::to_string(r.error());
            std::optional<class_secret> before;
            if (auto it = s.secrets.find(class_name); it != s.secrets.end()) before = it->second;
            publish(self, class_name, after_read(before, read, ref, s.cfg.platform_namespace));
          },
          [=](caf::error& e) {
            spdlog::warn("webhook intake: reading RunnerClass {}'s webhook secret: {}", class_name,
                         caf::to_string(e));
          });
}

// The classes changed: a new or changed reference is read at once (its
// path answers 503 meanwhile), a reference gone takes its path with it.
void on_classes(self_ptr self) {
  auto& st = self->state;
  auto refs = webhook_secret_refs(st.classes);
  bool dropped = false;
  for (auto it = st.secrets.begin(); it != st.secrets.end();)
    if (refs.count(it->first) == 0) {
      spdlog::info("webhook intake: RunnerClass {} has no webhook secret any more: its path answers 404",
                   it->first);
      it = st.secrets.erase(it);
      dropped = true;
    } else {
      ++it;
    }
  if (dropped) st.cfg.secrets->replace(st.secrets);
  for (const auto& [name, ref] : refs) {
    auto known = st.refs.find(name);
    if (known != st.refs.end() && known->second == ref) continue;
    st.refs.insert_or_assign(name, ref);
    publish(self, name, unexpected{std::string("its Secret has not been read yet")});
    read_secret(self, name);
  }
  std::erase_if(st.refs, [&](const auto& kv) { return refs.count(kv.first) == 0; });
}

caf::behavior class_hooks(self_ptr self, class_hooks_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.kube =
      kube::spawn_request_pool(self->system(), st.cfg.kube, st.cfg.kube_options, 1, st.cfg.request_timeout);
  kube::informer_options io;  // every RunnerClass (cluster-scoped)
  st.informer = watched::watch_runner_classes(self->system(), st.cfg.kube, st.cfg.kube_options, io);
  self->send(st.informer, kube::subscribe_atom::value, caf::actor_cast<caf::actor>(self));
  self->set_exit_handler([=](caf::exit_msg& em) {
    self->send_exit(self->state.informer, em.reason);
    self->send_exit(self->state.kube, em.reason);
    self->quit(em.reason);
  });
  self->delayed_send(self, st.cfg.resync, resync_atom::value);
  return {
      [=](watched::runner_class_event& ev) {
        if (!ev.obj) return;  // unreadable: the informer logged it
        auto& s = self->state;
        if (ev.type == kube::event_type::deleted)
          s.classes.erase(ev.obj->metadata.name);
        else
          s.classes.insert_or_assign(ev.obj->metadata.name, *ev.obj);
        on_classes(self);
      },
      [=](kube::informer_synced&) {},
      // Picks up a rotated, created or deleted Secret.
      [=](resync_atom) {
        for (const auto& [name, ref] : self->state.refs) read_secret(self, name);
        self->delayed_send(self, self->state.cfg.resync, resync_atom::value);
      },
  };
}

}  // namespace

caf::actor spawn_class_hooks(caf::actor_system& sys, class_hooks_config cfg) {
  return sys.spawn(class_hooks, std::move(cfg));
}

}  // namespace octorun::class_hooks
