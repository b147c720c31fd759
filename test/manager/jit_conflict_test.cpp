// The Runner actor's decision on a JIT name conflict.
#include "actors/runner/jit_conflict.hpp"

#include <gtest/gtest.h>

namespace octorun::runner {
namespace {

TEST(JitNameConflict, AnIdleHolderIsDeletedAndTheNameRegisteredAgain) {
  EXPECT_EQ(on_jit_name_conflict({true, false, false, false}), jit_conflict_action::delete_holder_and_retry);
}

TEST(JitNameConflict, ABusyHolderIsNeverDeleted) {
  EXPECT_EQ(on_jit_name_conflict({true, true, false, false}), jit_conflict_action::back_off);
}

TEST(JitNameConflict, AHolderInAnotherScaleSetIsNotOurs) {
  EXPECT_EQ(on_jit_name_conflict({true, false, true, false}), jit_conflict_action::back_off);
}

TEST(JitNameConflict, NoHolderAnyMoreMeansAskAgainAtOnce) {
  EXPECT_EQ(on_jit_name_conflict({false, false, false, false}), jit_conflict_action::retry_now);
}

TEST(JitNameConflict, OneDeleteAndRetryPerConflict) {
  EXPECT_EQ(on_jit_name_conflict({true, false, false, true}), jit_conflict_action::back_off);
  EXPECT_EQ(on_jit_name_conflict({false, false, false, true}), jit_conflict_action::back_off);
}

}  // namespace
}  // namespace octorun::runner
