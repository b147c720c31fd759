// What a parent holds of the children a supervisor (supervisor.hpp) keeps
// for it: each child's typed handle, so the parent sends to the child
// straight (one mailbox, not two), and what it sent while the child was not
// running (being spawned, or down and waiting to restart), delivered in
// order to the next incarnation. The supervisor tells the parent of each
// incarnation (child_notices); the parent hands those to on_started,
// on_down and on_gone.
#pragma once

#include <caf/all.hpp>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "actors/supervisor/supervisor.hpp"

namespace octorun::supervision {

template <class Child>
class child_handles {
 public:
  child_handles() = default;
  // `max_pending`: messages kept for one child while it is not running;
  // past this the oldest are dropped (and logged) rather than growing
  // without bound.
  explicit child_handles(caf::actor supervisor, std::size_t max_pending = 4096)
      : supervisor_(std::move(supervisor)), max_pending_(max_pending) {}

  const caf::actor& supervisor() const { return supervisor_; }

  // Sends `xs...` from `self` to the child `key`, asking the supervisor to
  // spawn it if it has none. A message the child's interface `Child` does
  // not take is a compile error.
  template <class Self, class... Ts>
  void send(Self* self, const std::string& key, Ts&&... xs) {
    using token = caf::detail::type_list<caf::detail::strip_and_convert_t<Ts>...>;
    static_assert(caf::response_type_unbox<typename Child::signatures, token>::valid,
                  "the child does not accept this message");
    auto [it, added] = entries_.try_emplace(key);
    auto& e = it->second;
    if (e.handle) {  // straight into its mailbox, as `self` sends
      caf::actor_cast<caf::actor>(e.handle)->enqueue(
          caf::make_mailbox_element(self->ctrl(), caf::make_message_id(), {}, std::forward<Ts>(xs)...),
          self->context());
      return;
    }
    // None yet, or a retiring one wanted again (a new object of the name):
    // the supervisor starts one (after the retiring one is down).
    if (added || (e.retiring && !e.wanted_again)) caf::anon_send(supervisor_, ensure_atom::value, key);
    e.wanted_again |= e.retiring;
    if (e.pending.size() >= max_pending_) {
      log_full(key);
      e.pending.erase(e.pending.begin());
    }
    e.pending.push_back(caf::make_message(std::forward<Ts>(xs)...));
  }

  // Stops the child `key` for good (its object is gone); what was kept for
  // it goes too. Its entry stays until the supervisor says it is gone, so a
  // late word of its start is not taken for a successor's.
  void retire(const std::string& key) {
    caf::anon_send(supervisor_, retire_atom::value, key);
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    auto& e = it->second;
    e.handle = nullptr;
    e.retiring = true;
    e.wanted_again = false;
    e.pending.clear();
  }

  // A new incarnation of `key`: it gets what was kept for it, then all
  // that follows (unless it is being retired).
  template <class Self>
  void on_started(Self* self, const std::string& key, const caf::actor& child) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    auto& e = it->second;
    e.address = child.address();
    if (e.retiring) return;
    e.handle = caf::actor_cast<Child>(child);
    for (auto& m : std::exchange(e.pending, {}))
      caf::actor_cast<caf::actor>(child)->enqueue(
          caf::make_mailbox_element(self->ctrl(), caf::make_message_id(), {}, std::move(m)), self->context());
  }
  // The child failed and waits to restart: what is sent to it is kept.
  void on_down(const std::string& key, const caf::actor_addr& child) {
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second.address == child) it->second.handle = nullptr;
  }
  // The child ended for good: the next message for `key` spawns a new one;
  // a retired one wanted again waits for its successor's start.
  void on_gone(const std::string& key, const caf::actor_addr& child) {
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.address != child) return;
    auto& e = it->second;
    if (!e.wanted_again) {
      entries_.erase(it);
      return;
    }
    e.handle = nullptr;
    e.address = caf::actor_addr{};
    e.retiring = e.wanted_again = false;
  }

 private:
  struct entry {
    Child handle;             // none while not running (or retiring)
    caf::actor_addr address;  // of the incarnation last started
    bool retiring = false;
    bool wanted_again = false;  // sent to while retiring: a successor is asked for
    // (a vector: an empty std::deque allocates a block up front, and a set
    // has a child per Runner)
    std::vector<caf::message> pending;
  };

  void log_full(const std::string& key) const;

  caf::actor supervisor_;
  std::size_t max_pending_ = 4096;
  std::map<std::string, entry> entries_;
};

// Logged when a child's backlog is full (supervisor.cpp).
void log_backlog_full(const caf::actor& supervisor, const std::string& key);

template <class Child>
void child_handles<Child>::log_full(const std::string& key) const {
  log_backlog_full(supervisor_, key);
}

}  // namespace octorun::supervision
