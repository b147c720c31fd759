// Which images each node already holds, as its kubelet would keep them: a
// runner pod bound to a node that has pulled every image it names starts
// with a cached pull, the first one on a node (a new node, a warm node no
// runner has used yet) with a cold one. The real-shaped cluster's kwok
// stages see only the pod, never its node (test/controlplane/karpenter.md),
// so the tool marks such a pod octorun.io/image-cached=true while its
// sandbox starts, before its pull stage is chosen. Pure: the pod watch
// feeds it, the caller patches the pods it names.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace octorun::loadtest {

inline constexpr const char* image_cached_annotation = "octorun.io/image-cached";

// What the pod watch saw of one runner pod.
struct pod_images {
  std::string node;                 // spec.nodeName; empty: not bound yet
  std::vector<std::string> images;  // every container's and init container's
  bool pulled = false;              // octorun.io/ImagesPulled=True: its node holds them now
  bool marked = false;              // already annotated image-cached
};

class node_image_cache {
 public:
  // Records what `pod` shows and says whether to mark it cached: bound, not
  // pulled, not marked, and its node already pulled every image it names.
  bool observe(const pod_images& pod);
  // The node went (consolidated, deleted): a node of the same name later
  // starts empty.
  void node_gone(const std::string& node);
  bool holds(const std::string& node, const std::string& image) const;

 private:
  std::map<std::string, std::set<std::string>> images_;  // by node
};

}  // namespace octorun::loadtest
