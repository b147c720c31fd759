#include "actors/supervisor/supervisor.hpp"

#include <spdlog/spdlog.h>

#include <map>
#include <random>
#include <utility>
#include <vector>

#include "actors/supervisor/child_handles.hpp"

namespace octorun::supervision {
namespace {

struct child_entry {
  caf::actor handle;  // empty while waiting to restart
  caf::actor_addr address;
  caf::actor_clock::time_point started{};
  restart_history history;
  int restarts = 0;
  std::uint64_t incarnation = 0;
  bool retiring = false;
  bool wanted_again = false;  // asked for (ensure) while retiring: started anew once it is down
};

struct supervisor_state {
  std::string label;
  child_factory make;
  supervisor_options options;
  std::mt19937_64 rng;
  std::map<std::string, child_entry> children;
  std::map<caf::actor_addr, std::string> keys;
  static constexpr const char* name = "supervisor";
};

using self_ptr = caf::stateful_actor<supervisor_state>*;

// Tells the parent (if any) about a child.
template <class... Ts>
void tell(self_ptr self, Ts&&... xs) {
  if (self->state.options.tell) self->send(self->state.options.tell, std::forward<Ts>(xs)...);
}

void start_child(self_ptr self, const std::string& key, child_entry& entry) {
  auto child = self->state.make(self, key);
  if (!child) {
    // A factory that cannot spawn is a programming error, not bad input.
    spdlog::critical("supervisor {}: factory returned no actor for {}", self->state.label, key);
    std::abort();
  }
  self->monitor(child);
  entry.handle = child;
  entry.address = child.address();
  entry.started = self->clock().now();
  ++entry.incarnation;
  self->state.keys[entry.address] = key;
  tell(self, child_started_atom::value, key, child);
}

void ensure_child(self_ptr self, const std::string& key) {
  auto [it, inserted] = self->state.children.try_emplace(key);
  if (inserted) return start_child(self, key, it->second);
  // Retiring (its object was deleted) and asked for again (a new object of
  // the name): a fresh incarnation once this one is down.
  if (it->second.retiring) it->second.wanted_again = true;
}

void forget(self_ptr self, const std::string& key) {
  auto it = self->state.children.find(key);
  if (it == self->state.children.end()) return;
  self->state.keys.erase(it->second.address);
  self->state.children.erase(it);
}

void on_down(self_ptr self, const caf::down_msg& dm) {
  auto k = self->state.keys.find(dm.source);
  if (k == self->state.keys.end()) return;
  std::string key = k->second;
  self->state.keys.erase(k);
  auto& entry = self->state.children.at(key);
  entry.handle = nullptr;
  const bool clean =
      !dm.reason || dm.reason == caf::exit_reason::normal || dm.reason == caf::exit_reason::user_shutdown;
  if (entry.retiring && entry.wanted_again) {
    tell(self, child_gone_atom::value, key, dm.source);
    const auto incarnation = entry.incarnation;
    entry = child_entry{};
    entry.incarnation = incarnation;
    return start_child(self, key, entry);
  }
  if (entry.retiring || clean) {
    self->state.children.erase(key);
    return tell(self, child_gone_atom::value, key, dm.source);
  }
  auto uptime = self->clock().now() - entry.started;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  auto delay =
      next_restart_delay(self->state.options.policy, entry.history, uptime, uniform(self->state.rng));
  ++entry.restarts;
  spdlog::warn("supervisor {}: child {} failed ({}); restart #{} in {} ms", self->state.label, key,
               self->system().render(dm.reason), entry.restarts,
               std::chrono::duration_cast<std::chrono::milliseconds>(delay).count());
  self->delayed_send(self, delay, restart_atom::value, key, entry.incarnation);
  tell(self, child_down_atom::value, key, dm.source);
}

}  // namespace

// Spawned with its arguments (never an empty argument list: CAF 0.17 then
// dereferences a null tuple pointer, which UBSan rightly reports).
caf::behavior supervisor_behavior(self_ptr self, std::string name, child_factory make,
                                  supervisor_options options) {
  self->state.label = name;
  self->state.make = make;
  self->state.options = options;
  self->state.rng.seed(options.seed != 0 ? options.seed : std::random_device{}());
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  // Stopping the supervisor stops its children with it.
  self->set_exit_handler([=](caf::exit_msg& em) {
    for (auto& [key, entry] : self->state.children)
      if (entry.handle) self->send_exit(entry.handle, em.reason);
    self->quit(em.reason);
  });
  return {
      [=](ensure_atom, const std::string& key) { ensure_child(self, key); },
      [=](retire_atom, const std::string& key) {
        auto it = self->state.children.find(key);
        if (it == self->state.children.end()) return;
        if (!it->second.handle) {  // waiting to restart: nothing is running
          const auto address = it->second.address;
          forget(self, key);
          return tell(self, child_gone_atom::value, key, address);
        }
        it->second.retiring = true;
        it->second.wanted_again = false;
        self->send_exit(it->second.handle, caf::exit_reason::user_shutdown);
      },
      [=](restart_atom, const std::string& key, std::uint64_t incarnation) {
        auto it = self->state.children.find(key);
        if (it == self->state.children.end() || it->second.handle || it->second.incarnation != incarnation)
          return;
        start_child(self, key, it->second);
      },
      [=](status_atom) {
        supervisor_status out;
        for (const auto& [key, entry] : self->state.children)
          out.push_back({key, static_cast<bool>(entry.handle), entry.restarts});
        return out;
      },
  };
}

caf::actor spawn_supervisor(caf::actor_system& sys, std::string name, child_factory make,
                            supervisor_options options) {
  return sys.spawn(supervisor_behavior, std::move(name), std::move(make), options);
}

void log_backlog_full(const caf::actor& supervisor, const std::string& key) {
  spdlog::error(
      "supervisor (actor {}): child {} is not running and its backlog is full; dropping its oldest message",
      supervisor ? supervisor.id() : 0, key);
}

}  // namespace octorun::supervision
