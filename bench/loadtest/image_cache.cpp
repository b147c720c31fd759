#include "bench/loadtest/image_cache.hpp"

#include <algorithm>

namespace octorun::loadtest {

bool node_image_cache::observe(const pod_images& pod) {
  if (pod.node.empty() || pod.images.empty()) return false;
  if (pod.pulled) {
    images_[pod.node].insert(pod.images.begin(), pod.images.end());
    return false;
  }
  if (pod.marked) return false;
  return std::all_of(pod.images.begin(), pod.images.end(),
                     [&](const std::string& image) { return holds(pod.node, image); });
}

void node_image_cache::node_gone(const std::string& node) { images_.erase(node); }

bool node_image_cache::holds(const std::string& node, const std::string& image) const {
  auto it = images_.find(node);
  return it != images_.end() && it->second.count(image) > 0;
}

}  // namespace octorun::loadtest
