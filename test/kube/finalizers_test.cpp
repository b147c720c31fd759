// The one finalizer add/remove: what the patch keeps, adds, removes and locks on.
#include "adapters/kube/finalizers.hpp"

#include <gtest/gtest.h>

namespace octorun::kube {
namespace {

object with(const char* metadata) {
  auto o = parse_object(std::string(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":)") + metadata + "}");
  EXPECT_TRUE(o) << o.error();
  return o ? *o : object{};
}

TEST(Finalizers, HasFinalizer) {
  auto o = with(R"({"name":"a","resourceVersion":"7","finalizers":["x.io/a","octorun.io/runner"]})");
  EXPECT_TRUE(has_finalizer(o, "octorun.io/runner"));
  EXPECT_FALSE(has_finalizer(o, "octorun.io/runnerset"));
  EXPECT_FALSE(has_finalizer(with(R"({"name":"a"})"), "octorun.io/runner"));
  EXPECT_FALSE(has_finalizer(with(R"({"name":"a","finalizers":"octorun.io/runner"})"), "octorun.io/runner"));
}

TEST(Finalizers, AddingKeepsTheOthersAndLocksOnTheResourceVersion) {
  auto o = with(R"({"name":"a","resourceVersion":"7","finalizers":["x.io/a"]})");
  EXPECT_EQ(finalizer_patch(o, "octorun.io/runner", true),
            R"({"metadata":{"resourceVersion":"7","finalizers":["x.io/a","octorun.io/runner"]}})");
  EXPECT_EQ(finalizer_patch(with(R"({"name":"a","resourceVersion":"3"})"), "octorun.io/runner", true),
            R"({"metadata":{"resourceVersion":"3","finalizers":["octorun.io/runner"]}})");
}

TEST(Finalizers, AddingTwiceListsItOnce) {
  auto o = with(R"({"name":"a","resourceVersion":"7","finalizers":["octorun.io/runner","x.io/a"]})");
  EXPECT_EQ(finalizer_patch(o, "octorun.io/runner", true),
            R"({"metadata":{"resourceVersion":"7","finalizers":["x.io/a","octorun.io/runner"]}})");
}

TEST(Finalizers, RemovingLeavesTheOthers) {
  auto o = with(R"({"name":"a","resourceVersion":"9","finalizers":["x.io/a","octorun.io/runner",1]})");
  EXPECT_EQ(finalizer_patch(o, "octorun.io/runner", false),
            R"({"metadata":{"resourceVersion":"9","finalizers":["x.io/a"]}})");
  EXPECT_EQ(finalizer_patch(with(R"({"name":"a","resourceVersion":"9"})"), "octorun.io/runner", false),
            R"({"metadata":{"resourceVersion":"9","finalizers":[]}})");
}

TEST(Finalizers, RemovalByJsonPatchTestsTheEntryItRemoves) {
  EXPECT_EQ(finalizer_removal_patch({"x.io/a", "octorun.io/runner", "y.io/b"}, "octorun.io/runner"),
            R"([{"op":"test","path":"/metadata/finalizers/1","value":"octorun.io/runner"},)"
            R"({"op":"remove","path":"/metadata/finalizers/1"}])");
  EXPECT_EQ(finalizer_removal_patch({"octorun.io/runner"}, "octorun.io/runner"),
            R"([{"op":"test","path":"/metadata/finalizers/0","value":"octorun.io/runner"},)"
            R"({"op":"remove","path":"/metadata/finalizers/0"}])");
  EXPECT_EQ(finalizer_removal_patch({"x.io/a"}, "octorun.io/runner"), std::nullopt);
  EXPECT_EQ(finalizer_removal_patch({}, "octorun.io/runner"), std::nullopt);
}

}  // namespace
}  // namespace octorun::kube
