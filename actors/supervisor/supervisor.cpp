#include "actors/supervisor/supervisor.hpp"

#include <spdlog/spdlog.h>

#include <map>
#include <random>
#include <utility>
#include <vector>

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
  // Messages for it while it is down (a vector: an empty std::deque
  // allocates a block up front, and a set has a child per Runner).
  std::vector<caf::message> pending;
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

void deliver(self_ptr self, const caf::actor& child, caf::message msg) {
  child->enqueue(caf::make_mailbox_element(self->ctrl(), caf::make_message_id(), {}, std::move(msg)),
                 self->context());
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
  for (auto& msg : std::exchange(entry.pending, {})) deliver(self, child, std::move(msg));
}

child_entry& ensure_child(self_ptr self, const std::string& key) {
  auto [it, inserted] = self->state.children.try_emplace(key);
  if (inserted) start_child(self, key, it->second);
  return it->second;
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
  if (entry.retiring || clean) {
    self->state.children.erase(key);
    return;
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
          forget(self, key);
          return;
        }
        it->second.retiring = true;
        self->send_exit(it->second.handle, caf::exit_reason::user_shutdown);
      },
      [=](route_atom, const std::string& key, caf::message& msg) {
        auto& entry = ensure_child(self, key);
        if (entry.retiring) return;  // the object is gone; late events die with it
        if (entry.handle) {
          deliver(self, entry.handle, std::move(msg));
          return;
        }
        if (entry.pending.size() >= self->state.options.max_pending_messages) {
          spdlog::error(
              "supervisor {}: child {} is down and its backlog is full; dropping its oldest message",
              self->state.label, key);
          entry.pending.erase(entry.pending.begin());
        }
        entry.pending.push_back(std::move(msg));
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

}  // namespace octorun::supervision
