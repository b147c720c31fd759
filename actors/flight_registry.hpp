// What an actor has in flight, the mechanism every actor uses: one entry per
// key (what was asked), with a note, since when, and a ticket that names the
// request. Nothing is sent twice while its entry stands; a reply is heeded
// only while its ticket is the entry's (a request taken as lost, or asked
// again since, answers into nothing); an entry older than the actor's limit
// is taken as lost (`take_lost`), and the decision that sent it runs again.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace octorun {

template <class Key>
class flight_registry {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  struct entry {
    std::string note;
    time_point since{};
    std::uint64_t ticket = 0;
  };

  // Records `key` in flight (replacing an entry of the same key); returns
  // the ticket its reply is matched with.
  std::uint64_t insert(Key key, std::string note = {}, time_point since = {}) {
    const auto ticket = ++last_ticket_;
    entries_[std::move(key)] = entry{std::move(note), since, ticket};
    return ticket;
  }
  void erase(const Key& key) { entries_.erase(key); }
  bool contains(const Key& key) const { return entries_.count(key) > 0; }
  // Whether the reply of request `ticket` is still awaited under `key`.
  bool holds(const Key& key, std::uint64_t ticket) const {
    auto it = entries_.find(key);
    return it != entries_.end() && it->second.ticket == ticket;
  }
  // The ticket of `key`'s entry (0: none).
  std::uint64_t ticket_of(const Key& key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? 0 : it->second.ticket;
  }
  bool empty() const { return entries_.empty(); }
  const std::map<Key, entry>& entries() const { return entries_; }
  // Removes and returns the entries in flight since before `now - limit`.
  std::vector<std::pair<Key, entry>> take_lost(time_point now, std::chrono::steady_clock::duration limit) {
    std::vector<std::pair<Key, entry>> lost;
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (now - it->second.since >= limit) {
        lost.emplace_back(it->first, std::move(it->second));
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
    return lost;
  }

 private:
  std::map<Key, entry> entries_;
  std::uint64_t last_ticket_ = 0;
};

}  // namespace octorun
