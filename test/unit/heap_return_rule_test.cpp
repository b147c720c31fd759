// When the manager trims its heap: once the free bytes rose by the
// threshold above their lowest since the last trim.
#include "common/heap_return_rule.hpp"

#include <gtest/gtest.h>

namespace octorun {
namespace {

constexpr std::size_t MiB = 1 << 20;

TEST(HeapReturnRule, TrimsOnceABurstWasFreedAndNotAgainUntilMoreIs) {
  heap_return_rule rule(8 * MiB);
  EXPECT_FALSE(rule.due(3 * MiB)) << "the first look: nothing freed since";
  EXPECT_FALSE(rule.due(1 * MiB)) << "a burst takes the free space";
  EXPECT_FALSE(rule.due(5 * MiB)) << "freed, but less than the threshold above the lowest";
  EXPECT_TRUE(rule.due(40 * MiB)) << "the burst freed";
  EXPECT_FALSE(rule.due(40 * MiB)) << "trimmed: the same free bytes are not resident any more";
  EXPECT_FALSE(rule.due(45 * MiB));
  EXPECT_FALSE(rule.due(47 * MiB)) << "7 MiB freed since the trim";
  EXPECT_TRUE(rule.due(48 * MiB));
}

TEST(HeapReturnRule, FreeSpaceTakenAndFreedAgainIsTrimmedAgain) {
  heap_return_rule rule(8 * MiB);
  EXPECT_FALSE(rule.due(1 * MiB));
  EXPECT_TRUE(rule.due(30 * MiB));
  // A second burst reuses the free space (making it resident) and frees it:
  // the free bytes end where they were at the trim, but are resident again.
  EXPECT_FALSE(rule.due(10 * MiB));
  EXPECT_TRUE(rule.due(30 * MiB));
}

}  // namespace
}  // namespace octorun
