// The Runner actor's decisions on a failed JIT request: a name conflict,
// and whether GitHub refused it for good.
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

// Only GitHub's own refusal is said on the Runner: the set answering that it
// cannot ask yet (a new leader loading its credentials) is retried unsaid.
TEST(JitRegistrationRefusal, OnlyGitHubsAnswerIsALastingRefusal) {
  using github::error_kind;
  auto e = [](error_kind k, long status) { return github::error{k, status, "m", {}, 0}; };
  EXPECT_TRUE(lasting_registration_refusal(e(error_kind::unauthorized, 401)));
  EXPECT_TRUE(lasting_registration_refusal(e(error_kind::not_found, 404)));
  EXPECT_TRUE(lasting_registration_refusal(e(error_kind::rejected, 422)));
  EXPECT_FALSE(lasting_registration_refusal(e(error_kind::not_ready, 0)));
  EXPECT_FALSE(lasting_registration_refusal(e(error_kind::unauthorized, 0))) << "not GitHub's answer";
  EXPECT_FALSE(lasting_registration_refusal(e(error_kind::rejected, 0))) << "not GitHub's answer";
  EXPECT_FALSE(lasting_registration_refusal(e(error_kind::server_error, 502)));
  EXPECT_FALSE(lasting_registration_refusal(e(error_kind::rate_limited, 403)));
  EXPECT_FALSE(lasting_registration_refusal(e(error_kind::conflict, 409)));
}

}  // namespace
}  // namespace octorun::runner
