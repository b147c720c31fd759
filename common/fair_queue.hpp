// A queue per key, served round robin over the keys that have items
// waiting: one key's burst waits behind itself, never in front of another
// key's first item. The Kubernetes request pool keys it by RunnerSet
// (kube::request_turn), so a set's thousand creates delay another set's
// first write by about one request, not a thousand. Pure; not thread-safe
// (one actor owns it).
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace octorun {

template <class T>
class fair_queue {
 public:
  void push(const std::string& key, T item) {
    auto& q = queues_[key];
    if (q.empty()) turn_.push_back(key);
    q.push_back(std::move(item));
    ++size_;
  }

  // The next item: the first of the key whose turn it is (the key then goes
  // to the back of the turn order if it has more). Empty when none waits.
  std::optional<T> pop() {
    if (turn_.empty()) return std::nullopt;
    auto key = std::move(turn_.front());
    turn_.pop_front();
    auto it = queues_.find(key);
    std::optional<T> item(std::move(it->second.front()));
    it->second.pop_front();
    --size_;
    // A key with nothing left holds no memory: a burst's queue goes with it.
    if (it->second.empty())
      queues_.erase(it);
    else
      turn_.push_back(std::move(key));
    return item;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t keys() const { return queues_.size(); }  // keys with items waiting

 private:
  std::unordered_map<std::string, std::deque<T>> queues_;
  std::deque<std::string> turn_;  // each key with items waiting, once, in serving order
  std::size_t size_ = 0;
};

}  // namespace octorun
