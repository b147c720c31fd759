#include "actors/runner/jit_conflict.hpp"

namespace octorun::runner {

bool holder_is_own(std::int64_t holder_id, std::initializer_list<std::int64_t> recorded_ids,
                   bool registered_as_the_sets) {
  if (holder_id == 0) return false;
  if (registered_as_the_sets) return true;
  for (auto id : recorded_ids)
    if (id != 0 && id == holder_id) return true;
  return false;
}

jit_conflict_action on_jit_name_conflict(const jit_conflict_view& c) {
  // One delete-and-retry per conflict: a name that is taken again at once is
  // an error, retried after the usual backoff.
  if (!c.holder_known)
    return c.retried_already ? jit_conflict_action::back_off : jit_conflict_action::retry_now;
  // Someone else's runner (another namespace's set of the same name, or one
  // registered outside Octorun): never deleted, busy or not.
  if (!c.holder_own) return jit_conflict_action::give_up_the_name;
  // A busy runner is never removed.
  if (c.holder_busy || c.retried_already) return jit_conflict_action::back_off;
  return jit_conflict_action::delete_holder_and_retry;
}

}  // namespace octorun::runner
