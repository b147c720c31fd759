// The Runner actor's decisions on a failed JIT request: a name conflict,
// and whether GitHub refused it for good.
#include "actors/runner/jit_conflict.hpp"

#include <gtest/gtest.h>

namespace octorun::runner {
namespace {

// View fields: holder known, busy, shown to be the Runner's own, retried already.
TEST(JitNameConflict, AnIdleHolderOfOurOwnIsDeletedAndTheNameRegisteredAgain) {
  EXPECT_EQ(on_jit_name_conflict({true, false, true, false}), jit_conflict_action::delete_holder_and_retry);
}

TEST(JitNameConflict, ABusyHolderIsNeverDeleted) {
  EXPECT_EQ(on_jit_name_conflict({true, true, true, false}), jit_conflict_action::back_off);
  EXPECT_EQ(on_jit_name_conflict({true, true, false, false}), jit_conflict_action::give_up_the_name);
}

// Issue 32: a set of the same name in another namespace (or anyone
// registering runners in the scope) may hold an equal name. A holder not
// shown to be ours is never deleted, idle or busy, first try or retry: the
// Runner gives the name up and its set makes another.
TEST(JitNameConflict, AHolderNotShownToBeOursIsNeverDeleted) {
  for (bool busy : {false, true})
    for (bool retried : {false, true})
      EXPECT_EQ(on_jit_name_conflict({true, busy, false, retried}), jit_conflict_action::give_up_the_name)
          << "busy " << busy << " retried " << retried;
}

TEST(JitNameConflict, NoHolderAnyMoreMeansAskAgainAtOnce) {
  EXPECT_EQ(on_jit_name_conflict({false, false, false, false}), jit_conflict_action::retry_now);
}

TEST(JitNameConflict, OneDeleteAndRetryPerConflict) {
  EXPECT_EQ(on_jit_name_conflict({true, false, true, true}), jit_conflict_action::back_off);
  EXPECT_EQ(on_jit_name_conflict({false, false, false, true}), jit_conflict_action::back_off);
}

// What shows a holder is the Runner's own: an id recorded for it, or its
// set's own scale set or label (actors/runnerset/set_registrations.hpp); an
// equal name alone never does.
TEST(JitNameConflict, OnlyARecordedIdOrTheSetsOwnScaleSetShowsAHolderIsOurs) {
  EXPECT_TRUE(holder_is_own(42, {0, 42}, false)) << "the id its status or Secret records";
  EXPECT_TRUE(holder_is_own(42, {42}, false)) << "the id the set recorded for its uid";
  EXPECT_TRUE(holder_is_own(42, {}, true)) << "registered as the set's: its own scale set, or its label";
  EXPECT_FALSE(holder_is_own(42, {0, 0}, false)) << "nothing recorded: a name alone";
  EXPECT_FALSE(holder_is_own(42, {41, 43}, false)) << "another registration of ours";
  EXPECT_FALSE(holder_is_own(0, {0}, true)) << "no holder";
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
