// Runner creates in slow-start batches (actors/runnerset/create_pacing.hpp):
// the window's rule, and the plan that sends no more than it allows while
// every create out holds its runner's place. No actor, no I/O.
#include "actors/runnerset/create_pacing.hpp"

#include <gtest/gtest.h>

#include "actors/runnerset/plan.hpp"
#include "test/manager/runnerset_plan_fixtures.hpp"

namespace octorun::runnerset {
namespace {

using namespace plan_fixtures;
using plan_fixtures::demand;  // not the struct runnerset::demand (scaling.hpp)

// Sends what the window allows, then answers all of it: one round.
std::int32_t round_of_answers(create_pacing& p, bool succeed = true) {
  const auto sent = creates_allowed(p);
  for (std::int32_t i = 0; i < sent; ++i) note_create_sent(p);
  for (std::int32_t i = 0; i < sent; ++i) note_create_answered(p, succeed);
  return sent;
}

TEST(CreatePacing, ABurstStartsWithTheFirstBatchAndDoublesWhileCreatesSucceed) {
  create_pacing p;
  EXPECT_EQ(creates_allowed(p), first_create_batch);
  EXPECT_EQ(round_of_answers(p), first_create_batch);
  EXPECT_EQ(round_of_answers(p), 2 * first_create_batch);
  EXPECT_EQ(round_of_answers(p), 4 * first_create_batch);
  for (int i = 0; i < 10; ++i) round_of_answers(p);
  EXPECT_EQ(creates_allowed(p), most_creates_in_flight) << "never more out at once than the bound";
}

TEST(CreatePacing, CreatesOutCountAgainstTheWindowUntilAnswered) {
  create_pacing p;
  for (int i = 0; i < 10; ++i) note_create_sent(p);
  EXPECT_EQ(creates_allowed(p), first_create_batch - 10);
  for (int i = 0; i < first_create_batch - 10; ++i) note_create_sent(p);
  EXPECT_EQ(creates_allowed(p), 0) << "a full window waits for answers";
  note_create_answered(p, true);
  EXPECT_EQ(creates_allowed(p), 2) << "an answer frees its place and widens the window by one";
}

TEST(CreatePacing, AFailureStopsTheBurstUntilEverythingOutIsAnsweredThenGoesOneAtATime) {
  create_pacing p;
  for (int i = 0; i < first_create_batch; ++i) note_create_sent(p);
  note_create_answered(p, false);
  EXPECT_EQ(creates_allowed(p), 0) << "nothing more while the batch that failed is out";
  for (int i = 1; i < first_create_batch; ++i) note_create_answered(p, true);
  // Successes after the failure widen the window again from one.
  EXPECT_EQ(p.unanswered, 0);
  EXPECT_EQ(creates_allowed(p), first_create_batch);  // 1 + 15 answers that succeeded
  create_pacing q;
  EXPECT_EQ(round_of_answers(q, false), first_create_batch);
  EXPECT_EQ(creates_allowed(q), 1) << "after a batch that failed: one create, a probe";
  note_plan_done(q);
  EXPECT_EQ(creates_allowed(q), first_create_batch) << "nothing wanted and nothing out: the burst is over";
  q.window = 1;
  EXPECT_EQ(round_of_answers(q), 1);
  EXPECT_EQ(round_of_answers(q), 2);
  EXPECT_EQ(round_of_answers(q), 4);
}

TEST(CreatePacing, TheNextBurstStartsWithTheFirstBatchAgain) {
  create_pacing p;
  round_of_answers(p);
  round_of_answers(p);
  note_create_sent(p);
  note_plan_done(p);
  EXPECT_EQ(p.window, 4 * first_create_batch) << "a burst still out keeps its window";
  note_create_answered(p, true);
  note_plan_done(p);
  EXPECT_EQ(creates_allowed(p), first_create_batch);
}

// ---- the plan ----------------------------------------------------------------------

TEST(CreatePacing, APlanSendsNoMoreCreatesThanTheWindowAllowsOverAllVariants) {
  auto o = ready_set();
  o.set->spec.max_runners = 1000;
  demand(o, 100);
  EXPECT_EQ(creates(plan(o)), first_create_batch) << "a burst's first batch";
  o.creates.unanswered = first_create_batch - 3;
  EXPECT_EQ(creates(plan(o)), 3);
  o.creates.unanswered = first_create_batch;
  EXPECT_EQ(creates(plan(o)), 0) << "the rest waits for answers";
  // The window is the set's, shared by its variants in declaration order.
  o.creates = {};
  o.set->spec.variants = {model::variant_spec{"a", {"a"}, {}, {}, {}},
                          model::variant_spec{"b", {"b"}, {}, {}, {}}};
  o.active_jobs.clear();
  demand(o, 10, "a");
  demand(o, 10, "b");
  auto p = plan(o);
  EXPECT_EQ(creates(p), first_create_batch);
  auto batches = of(p, action_kind::create_runners);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].subject, "a");
  EXPECT_EQ(batches[0].count, 10);
  EXPECT_EQ(batches[1].count, first_create_batch - 10);
}

TEST(CreatePacing, AWaveOfTwentyGoesOutAsOneBatchAndTheStartOfASecond) {
  auto o = ready_set();
  o.set->spec.max_runners = 100;
  demand(o, 20);
  auto p = plan(o);
  EXPECT_EQ(creates(p), first_create_batch);
  // The batch is out: its creates hold their places (never a second runner
  // for their jobs), and each answer makes room for the rest.
  for (int i = 0; i < first_create_batch; ++i) {
    o.in_flight.insert({action_kind::create_runners, "linux-" + std::to_string(i)}, "");
    note_create_sent(o.creates);
  }
  EXPECT_EQ(creates(plan(o)), 0);
  note_create_answered(o.creates, true);
  EXPECT_EQ(creates(plan(o)), 2) << "one answer: room for two more";
  for (int i = 1; i < 4; ++i) note_create_answered(o.creates, true);
  EXPECT_EQ(creates(plan(o)), 20 - first_create_batch) << "never more than the wave wants";
}

TEST(CreatePacing, ACappedBurstNeverPassesMaxRunners) {
  auto o = ready_set();
  o.set->spec.max_runners = 40;
  demand(o, 1000);
  o.creates.window = most_creates_in_flight;
  EXPECT_EQ(creates(plan(o)), 40);
  for (int i = 0; i < 30; ++i)
    o.in_flight.insert({action_kind::create_runners, "linux-" + std::to_string(i)}, "");
  EXPECT_EQ(creates(plan(o)), 10) << "the creates out hold their places";
}

}  // namespace
}  // namespace octorun::runnerset
