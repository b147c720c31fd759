// One reconcile per turn of the mailbox, the mechanism every actor uses:
// a handler that changes what the actor knows marks it dirty instead of
// deciding at once; the first mark queues one message to the actor itself,
// which runs its reconcile after the messages already queued, so one
// decision covers them all (and no reply handler decides inside another).
#pragma once

#include <utility>

namespace octorun {

class reconcile_turn {
 public:
  // Marks the actor dirty; the first mark since the last reconcile sends
  // `atom` to `self` (the actor's reconcile message).
  template <class Self, class Atom>
  void mark(Self* self, Atom atom) {
    if (!std::exchange(queued_, true)) self->send(self, atom);
  }
  // The queued message arrived: the reconcile it asks for runs now, and the
  // next mark queues another.
  void taken() { queued_ = false; }
  bool queued() const { return queued_; }

 private:
  bool queued_ = false;
};

}  // namespace octorun
