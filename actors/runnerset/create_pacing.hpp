// Runner creates in slow-start batches, as Kubernetes' ReplicaSet
// controller sends Pod creates (slowStartBatch): a burst starts with a
// batch, and the creates that may be out at once double while they
// succeed; the first failure stops the burst until everything already out
// is answered, then it goes on one create at a time, doubling again. A set
// asking for thousands of runners (a typo, a hostile tenant) so probes the
// apiserver before it floods the manager's request pool and the apiserver
// with creates that a quota or an overloaded apiserver will refuse anyway.
//
// The window counts creates sent and not yet answered (a create answered
// and not yet watched holds its runner's place in the plan, but not the
// window). Batches are not waited for one by one: a create goes out while
// the window has room, so a job arriving while an earlier one's runner is
// being created is served at once. Pure: the plan reads creates_allowed,
// the actor notes sends and answers.
#pragma once

#include <cstdint>

namespace octorun::runnerset {

// A burst's first batch. Jobs come in waves (a push starts a workflow's
// jobs together, a matrix fans out to a few dozen): a wave of twenty goes
// out in one batch and the start of a second, sent as the first batch's
// answers come, so the usual job path waits for no round of answers.
inline constexpr std::int32_t first_create_batch = 16;
// The most creates out at once, however long creates succeed: the
// ReplicaSet controller's burstReplicas.
inline constexpr std::int32_t most_creates_in_flight = 500;

struct create_pacing {
  std::int32_t window = first_create_batch;  // creates that may be unanswered at once
  std::int32_t unanswered = 0;               // sent, no answer yet
  bool operator==(const create_pacing&) const = default;
};

// How many more creates may go out now (over all of the set's variants).
std::int32_t creates_allowed(const create_pacing& p);
// A create went out.
void note_create_sent(create_pacing& p);
// A create was answered: a success widens the window by one (so it doubles
// per round of answers), a failure (an error, no answer, a timeout) closes
// it to one.
void note_create_answered(create_pacing& p, bool succeeded);
// After a plan's actions went out: nothing is out, so the burst is over
// (the plan sends creates whenever the window has room and the set wants
// more); the next one starts with the first batch again.
void note_plan_done(create_pacing& p);

}  // namespace octorun::runnerset
