// The request pool's queue: round robin over the keys with items waiting.
#include "common/fair_queue.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace octorun {
namespace {

std::vector<std::string> drain(fair_queue<std::string>& q) {
  std::vector<std::string> out;
  while (auto item = q.pop()) out.push_back(*item);
  return out;
}

TEST(FairQueue, ABurstWaitsBehindItselfNotInFrontOfAnotherKeysFirstItem) {
  fair_queue<std::string> q;
  for (int i = 0; i < 1000; ++i) q.push("burst", "b" + std::to_string(i));
  q.push("quiet", "q0");
  EXPECT_EQ(q.size(), 1001u);
  EXPECT_EQ(q.keys(), 2u);
  EXPECT_EQ(*q.pop(), "b0");
  EXPECT_EQ(*q.pop(), "q0") << "the quiet key's first item is served second, not 1001st";
  EXPECT_EQ(*q.pop(), "b1");
  EXPECT_EQ(q.keys(), 1u) << "a key with nothing left is forgotten";
}

TEST(FairQueue, KeysTakeTurnsInTheOrderTheyArrivedAndEachKeepsItsOwnOrder) {
  fair_queue<std::string> q;
  q.push("a", "a0");
  q.push("a", "a1");
  q.push("b", "b0");
  q.push("c", "c0");
  q.push("c", "c1");
  q.push("a", "a2");
  EXPECT_EQ(drain(q), (std::vector<std::string>{"a0", "b0", "c0", "a1", "c1", "a2"}));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.keys(), 0u);
  EXPECT_FALSE(q.pop());
  q.push("b", "b1");  // a key that comes back after draining starts a new turn
  EXPECT_EQ(drain(q), (std::vector<std::string>{"b1"}));
}

}  // namespace
}  // namespace octorun
