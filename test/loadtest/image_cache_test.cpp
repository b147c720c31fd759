// The load-test tool's per-node image cache (bench/loadtest/image_cache.hpp):
// which runner pods it marks as a cached pull, over sequences of what its
// pod and node watches see.
#include "bench/loadtest/image_cache.hpp"

#include <gtest/gtest.h>

namespace octorun::loadtest {
namespace {

const std::string runner_image = "ghcr.io/actions/actions-runner:2.330.0";

pod_images bound(const std::string& node, std::vector<std::string> images = {runner_image}) {
  return {node, std::move(images), false, false};
}

pod_images pulled(const std::string& node, std::vector<std::string> images = {runner_image}) {
  return {node, std::move(images), true, false};
}

TEST(NodeImageCache, TheFirstPodOnANodePullsColdTheNextCached) {
  node_image_cache cache;
  EXPECT_FALSE(cache.observe({"", {runner_image}, false, false})) << "not bound: no node to hold anything";
  EXPECT_FALSE(cache.observe(bound("node-a"))) << "the node has pulled nothing yet";
  EXPECT_FALSE(cache.observe(pulled("node-a")));
  EXPECT_TRUE(cache.holds("node-a", runner_image));
  EXPECT_TRUE(cache.observe(bound("node-a"))) << "the second runner on the node";
  EXPECT_FALSE(cache.observe(bound("node-b"))) << "another node has its own cache";
}

TEST(NodeImageCache, EveryImageOfThePodMustBeOnTheNode) {
  node_image_cache cache;
  cache.observe(pulled("node-a"));
  EXPECT_FALSE(cache.observe(bound("node-a", {"docker:dind", runner_image})))
      << "a dind sidecar's image was never pulled there";
  cache.observe(pulled("node-a", {"docker:dind", runner_image}));
  EXPECT_TRUE(cache.observe(bound("node-a", {runner_image, "docker:dind"})));
  EXPECT_FALSE(cache.observe(bound("node-a", {}))) << "a pod naming no image is left to the stages";
}

TEST(NodeImageCache, AMarkedOrPulledPodIsNotMarkedAgain) {
  node_image_cache cache;
  cache.observe(pulled("node-a"));
  EXPECT_FALSE(cache.observe({"node-a", {runner_image}, false, true})) << "already marked";
  EXPECT_FALSE(cache.observe(pulled("node-a"))) << "already pulled";
}

TEST(NodeImageCache, ANodeThatWentStartsEmptyUnderTheSameName) {
  node_image_cache cache;
  cache.observe(pulled("node-a"));
  cache.observe(pulled("node-b"));
  cache.node_gone("node-a");
  EXPECT_FALSE(cache.holds("node-a", runner_image));
  EXPECT_FALSE(cache.observe(bound("node-a"))) << "a new node of the old name pulls cold";
  EXPECT_TRUE(cache.observe(bound("node-b")));
}

}  // namespace
}  // namespace octorun::loadtest
