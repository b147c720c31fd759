// The informer actor, for any handle type (adapters/kube/informer.hpp):
// included by informer.cpp (kube::object) and by the one .cpp that
// instantiates spawn_typed_informer for its decoded types.
#pragma once

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <caf/all.hpp>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "adapters/kube/informer.hpp"

namespace octorun::kube::detail {

// What the reflector (detached) hands its informer, decoded: a list holds
// only the objects kept; an event's `obj` is empty when its object was
// unreadable or refused (`what`, applied by apply_decoded_event).
template <class Handle>
struct reflector_list {
  std::vector<Handle> items;
};
template <class Handle>
struct reflector_event {
  event_type type = event_type::added;
  std::string key;
  decoded what = decoded::kept;
  Handle obj;
};

}  // namespace octorun::kube::detail

namespace caf {
template <class Handle>
struct allowed_unsafe_message_type<octorun::kube::detail::reflector_list<Handle>> : std::true_type {};
template <class Handle>
struct allowed_unsafe_message_type<octorun::kube::detail::reflector_event<Handle>> : std::true_type {};
}  // namespace caf

namespace octorun::kube::detail {

template <class Handle>
struct informer_state {
  std::string source;
  cache_of<Handle> cache;
  std::vector<caf::actor> subscribers;
  bool synced = false;
  informer_stats stats;
  std::shared_ptr<std::atomic<bool>> stop = std::make_shared<std::atomic<bool>>(false);
  ~informer_state() { stop->store(true); }  // ends the reflector within ~100 ms
  static inline const char* name = "kube-informer";
};

template <class Handle>
using informer_actor = caf::stateful_actor<informer_state<Handle>>;

template <class Handle>
void publish(informer_actor<Handle>* self, event_type type, const Handle& obj) {
  for (const auto& s : self->state.subscribers)
    self->send(s, informer_update<Handle>{self->state.source, type, obj});
}

// Decodes `o` and asks `keep` (none: keep all) whether to keep it.
template <class Handle>
std::pair<decoded, Handle> decode_and_keep(const object& o, const decoder<Handle>& decode,
                                           const keep_filter<Handle>& keep) {
  auto h = decode(o);
  if (!h) return {decoded::unreadable, Handle{}};
  if (keep && !keep(h)) return {decoded::refused, Handle{}};
  return {decoded::kept, std::move(h)};
}

// The list-then-watch loop on its own thread; every object is decoded and
// filtered here, once, and only what is kept reaches the informer.
template <class Handle>
void reflector(caf::blocking_actor*, caf::actor informer, config cfg, client_options opts,
               informer_options io, std::shared_ptr<std::atomic<bool>> stop, decoder<Handle> decode,
               keep_filter<Handle> keep) {
  opts.drop_managed_fields = !io.keep_managed_fields;
  client api(std::move(cfg), std::move(opts));
  api.set_cancel_flag(stop.get());
  auto source = informer_source(io);
  reflector_callbacks cb;
  cb.replaced = [&](object_list l) {
    reflector_list<Handle> msg;
    msg.items.reserve(l.items.size());
    for (const auto& o : l.items) {
      auto [what, h] = decode_and_keep(o, decode, keep);
      if (what == decoded::kept) msg.items.push_back(std::move(h));
    }
    caf::anon_send(informer, std::move(msg));
  };
  cb.event = [&](watch_event ev) {
    reflector_event<Handle> msg{ev.type, ev.obj ? ev.obj.key() : std::string(), decoded::unreadable, {}};
    if (ev.obj) std::tie(msg.what, msg.obj) = decode_and_keep(ev.obj, decode, keep);
    caf::anon_send(informer, std::move(msg));
  };
  cb.failed = [&](const api_error& e, const char* during) {
    spdlog::warn("kube informer {}: {} failed: {}; retrying", source, during, to_string(e));
  };
  cb.silent = [&] {
    spdlog::info("kube informer {}: watch brought no event and no bookmark for {} s; watching again", source,
                 std::chrono::duration_cast<std::chrono::seconds>(io.watch_silence_limit).count());
    caf::anon_send(informer, silent_atom::value);
  };
  run_reflector(api, io, *stop, cb);
}

template <class Handle>
caf::behavior informer(informer_actor<Handle>* self, config cfg, client_options opts, informer_options io,
                       decoder<Handle> decode, keep_filter<Handle> keep) {
  self->state.source = informer_source(io);
  self->system().template spawn<caf::detached>(reflector<Handle>, caf::actor_cast<caf::actor>(self),
                                               std::move(cfg), std::move(opts), io, self->state.stop,
                                               std::move(decode), std::move(keep));
  self->set_down_handler([=](const caf::down_msg& dm) {
    auto& subs = self->state.subscribers;
    subs.erase(std::remove_if(subs.begin(), subs.end(), [&](const caf::actor& a) { return a == dm.source; }),
               subs.end());
  });
  return {
      [=](reflector_list<Handle>& msg) {
        auto& st = self->state;
        ++st.stats.lists;
        auto diff = replace_all(st.cache, std::move(msg.items));
        st.stats.events += diff.size();
        for (const auto& ch : diff) publish(self, ch.type, ch.obj);
        if (!st.synced) {
          st.synced = true;
          for (const auto& s : st.subscribers) self->send(s, informer_synced{st.source, st.cache.size()});
        }
      },
      [=](reflector_event<Handle>& msg) {
        auto& st = self->state;
        if (msg.type == event_type::error) ++st.stats.watch_errors;
        auto change = apply_decoded_event(st.cache, msg.type, msg.key, msg.what, msg.obj);
        if (!change) return;
        ++st.stats.events;
        publish(self, change->type, change->obj);
      },
      [=](silent_atom) { ++self->state.stats.silent_watches; },
      [=](subscribe_atom, caf::actor who) {
        auto& st = self->state;
        if (std::find(st.subscribers.begin(), st.subscribers.end(), who) != st.subscribers.end()) return;
        self->monitor(who);
        st.subscribers.push_back(who);
        for (const auto& [key, obj] : st.cache)
          self->send(who, informer_update<Handle>{st.source, event_type::added, obj});
        if (st.synced) self->send(who, informer_synced{st.source, st.cache.size()});
      },
      [=](unsubscribe_atom, caf::actor who) {
        auto& subs = self->state.subscribers;
        subs.erase(std::remove(subs.begin(), subs.end(), who), subs.end());
        self->demonitor(who);
      },
      [=](snapshot_atom) {
        snapshot_of<Handle> snap;
        snap.synced = self->state.synced;
        snap.items.reserve(self->state.cache.size());
        for (const auto& [key, obj] : self->state.cache) snap.items.push_back(obj);
        return snap;
      },
      [=](snapshot_atom, const std::string& key) {
        auto it = self->state.cache.find(key);
        return it == self->state.cache.end() ? Handle{} : it->second;
      },
      [=](stats_atom) {
        auto s = self->state.stats;
        s.size = self->state.cache.size();
        return s;
      },
  };
}

}  // namespace octorun::kube::detail

namespace octorun::kube {

template <class Handle>
caf::actor spawn_typed_informer(caf::actor_system& sys, const config& cfg, client_options opts,
                                informer_options io, decoder<Handle> decode, keep_filter<Handle> keep) {
  return sys.spawn(detail::informer<Handle>, cfg, std::move(opts), std::move(io), std::move(decode),
                   std::move(keep));
}

}  // namespace octorun::kube
