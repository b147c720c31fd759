// The tests' poll loop (test/support/poll.hpp, wait.hpp): what it returns and
// what a timeout reports.
#include "test/support/wait.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace octorun::test {
namespace {

using namespace std::chrono_literals;

TEST(Poll, ReturnsTheValueThatMetTheCondition) {
  int calls = 0;
  auto seen = poll([&] { return ++calls; }, [](int n) { return n == 3; }, 10s);
  EXPECT_TRUE(seen);
  EXPECT_EQ(seen.last, 3);
  EXPECT_EQ(calls, 3);
}

TEST(Poll, ATimeoutReturnsTheLastValueObserved) {
  int calls = 0;
  auto seen = poll([&] { return ++calls; }, [](int) { return false; }, 50ms);
  EXPECT_FALSE(seen);
  EXPECT_EQ(seen.last, calls);
}

TEST(Poll, AZeroDeadlineStillObservesOnce) {
  int calls = 0;
  auto seen = poll([&] { return ++calls; }, [](int n) { return n == 1; }, 0ms);
  EXPECT_TRUE(seen);
  EXPECT_EQ(calls, 1);
}

TEST(WaitFor, ATimeoutFailsTheTestNamingWhatAndTheLastValue) {
  EXPECT_NONFATAL_FAILURE(
      wait_for([] { return std::string("Pending"); }, [](const std::string& p) { return p == "Running"; },
               20ms, "the runner to run", [] { return std::string("the pods: none"); }),
      "waiting for the runner to run; last observed: 'Pending'\nthe pods: none");
}

TEST(WaitFor, TheValueFormShowsWhatItWanted) {
  EXPECT_NONFATAL_FAILURE(wait_for_value([] { return 2; }, 3, 20ms, "the count"),
                          "waiting for the count to be 3; last observed: 2");
}

TEST(WaitFor, ThePredicateFormNamesWhatItWaitedFor) {
  EXPECT_NONFATAL_FAILURE(wait_for([] { return false; }, 20ms, "the webhook to take effect"),
                          "waiting for the webhook to take effect");
  EXPECT_TRUE(wait_for([] { return true; }, 20ms, "nothing"));
}

}  // namespace
}  // namespace octorun::test
