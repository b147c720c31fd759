// What the Runner actor does when GitHub refuses to register its name again
// (a JIT request answered with a conflict). The name is often held by this
// Runner's own earlier registration (a retried request GitHub had
// completed, or a Secret lost before it was stored), which is deleted when
// idle so the name can be registered once more. But a name proves nothing:
// a set of the same name in another namespace, or anyone registering
// runners in the scope, may hold an equal one. So only a holder shown to
// be this Runner's own is ever deleted (holder_is_own); any other is left
// alone and the Runner gives the name up: it fails (reason NameTaken) and
// its RunnerSet makes a new Runner, with a new name. Pure; the actor
// executes the answer.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "adapters/github/error.hpp"

namespace octorun::runner {

// The reason of a Runner that gave its name up (status.reason, and its
// Registered condition).
inline constexpr const char* name_taken_reason = "NameTaken";

// Whether the GitHub runner `holder_id` holding a Runner's name is that
// Runner's own earlier registration: its id is one recorded for this very
// Runner (`recorded_ids`: its status, its JIT Secret, the set's record of a
// JIT configuration obtained for its uid; 0s are ignored), or it is
// registered as the set's (`registered_as_the_sets`: in the set's own scale
// set, where no other set registers runners
// (actors/controller/scale_set_claims.hpp), or, a REST runner, carrying the
// label only the set registers with (actors/runnerset/set_registrations.hpp))
// and no other Runner of the set has this name.
bool holder_is_own(std::int64_t holder_id, std::initializer_list<std::int64_t> recorded_ids,
                   bool registered_as_the_sets);

struct jit_conflict_view {
  bool holder_known = false;     // GitHub named the runner holding the name
  bool holder_busy = false;      // ... and it is running a job
  bool holder_own = false;       // ... and it is this Runner's own registration (holder_is_own)
  bool retried_already = false;  // this conflict follows our own delete-and-retry
};

enum class jit_conflict_action {
  delete_holder_and_retry,  // free the name (an idle registration of this Runner's), then ask again at once
  retry_now,                // nobody holds it any more: ask again at once
  back_off,                 // our own busy holder, or a retry that conflicted again: an error
  give_up_the_name,         // a holder not shown to be ours: left alone; the Runner fails (NameTaken)
};

jit_conflict_action on_jit_name_conflict(const jit_conflict_view& conflict);

// Whether a failed JIT request is GitHub refusing to register the runner
// until someone changes something (credentials, scope, runner group,
// labels): the Runner then says so (Registered=False, a Warning Event).
// Only an answer GitHub gave (an HTTP status) is: the set's own answers
// (its credentials not loaded yet, the scale set not registered yet) are
// not, nor is a rate limit (the set's pause), a 5xx or no answer; those are
// retried unsaid.
inline bool lasting_registration_refusal(const github::error& e) {
  if (e.status == 0) return false;
  return e.kind == github::error_kind::unauthorized || e.kind == github::error_kind::not_found ||
         e.kind == github::error_kind::rejected;
}

}  // namespace octorun::runner
