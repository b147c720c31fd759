// Watches a run's runner pods and the nodes they may land on, and records
// when each step of a pod's start was first seen (pod_marks) and when each
// node appeared, turned Ready and went (node_marks), in wall-clock unix
// milliseconds so they line up with the simulator's job timestamps. The
// watch's own sightings are used rather than the objects' timestamps: those
// (creationTimestamp, conditions' lastTransitionTime) have whole-second
// resolution. With `mark_cached_pulls` it also plays each node's image
// cache (image_cache.hpp): it marks a pod bound to a node that pulled its
// images before. Blocking: list-then-watch on threads of its own.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "adapters/kube/client.hpp"
#include "adapters/kube/config.hpp"
#include "adapters/kube/object.hpp"
#include "bench/loadtest/breakdown.hpp"
#include "bench/loadtest/image_cache.hpp"

namespace octorun::loadtest {

class placement_watch {
 public:
  // Pods of `ns` matching `pod_selector`; nodes matching `node_selector`
  // (a label selector, empty: every node).
  placement_watch(const kube::config& cfg, const std::string& ns, const std::string& pod_selector,
                  const std::string& node_selector, bool mark_cached_pulls);
  ~placement_watch();
  placement_watch(const placement_watch&) = delete;
  placement_watch& operator=(const placement_watch&) = delete;

  std::map<std::string, pod_marks> pods() const;  // by Runner (the pod's octorun.io/runner label)
  std::map<std::string, node_marks> nodes() const;

 private:
  void on_pod(const kube::object& o, bool deleted);
  void on_node(const kube::object& o, bool deleted);

  std::string ns_;
  std::unique_ptr<kube::client> patcher_;  // null: no image cache
  mutable std::mutex mu_;
  std::map<std::string, pod_marks> pods_;
  std::map<std::string, node_marks> nodes_;
  node_image_cache images_;
  std::set<std::string> marked_;  // pods marked (or being marked) image-cached
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace octorun::loadtest
