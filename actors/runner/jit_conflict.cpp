#include "actors/runner/jit_conflict.hpp"

namespace octorun::runner {

jit_conflict_action on_jit_name_conflict(const jit_conflict_view& c) {
  // One delete-and-retry per conflict: a name that is taken again at once is
  // an error, retried after the usual backoff.
  if (c.retried_already) return jit_conflict_action::back_off;
  if (!c.holder_known) return jit_conflict_action::retry_now;
  // A busy runner is never removed; another scale set's runner is not ours.
  if (c.holder_busy || c.other_scale_set) return jit_conflict_action::back_off;
  return jit_conflict_action::delete_holder_and_retry;
}

}  // namespace octorun::runner
