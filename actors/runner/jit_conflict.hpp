// What the Runner actor does when GitHub refuses to register its name again
// (a JIT request answered with a conflict): usually the name is held by our
// own earlier registration (a retried request GitHub had completed, or a
// Secret lost before it was stored), which is deleted when idle so the name
// can be registered once more. Pure; the actor executes the answer.
#pragma once

#include <cstdint>

#include "adapters/github/error.hpp"

namespace octorun::runner {

struct jit_conflict_view {
  bool holder_known = false;     // GitHub named the runner holding the name
  bool holder_busy = false;      // ... and it is running a job
  bool other_scale_set = false;  // ... and it belongs to another scale set
  bool retried_already = false;  // this conflict follows our own delete-and-retry
};

enum class jit_conflict_action {
  delete_holder_and_retry,  // free the name (an idle runner of ours), then ask again at once
  retry_now,                // nobody holds it any more: ask again at once
  back_off,                 // a busy or foreign holder, or a retry that conflicted again: an error
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
