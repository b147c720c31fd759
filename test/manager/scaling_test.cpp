#include "actors/runnerset/scaling.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace octorun::runnerset {
namespace {

using model::runner_phase;

runner_view idle(std::string name, bool ready = true, std::int64_t created = 0) {
  return {std::move(name), runner_phase::pending, false, false, ready, created};
}
runner_view busy(std::string name) { return {std::move(name), runner_phase::running, true, false, true, 0}; }

TEST(Scaling, DesiredIsMinPlusAssignedJobsCappedAtMax) {
  EXPECT_EQ(desired_runners({0, 10, 0, 0}), 0);
  EXPECT_EQ(desired_runners({2, 10, 0, 3}), 5);
  EXPECT_EQ(desired_runners({2, 10, 0, 30}), 10);
  EXPECT_EQ(desired_runners({0, 10, 0, -4}), 0);
}

// spec.replicas (kubectl scale, an HPA) is a floor under demand: it raises
// the count, never lowers what the jobs need, and stays within [min, max].
TEST(Scaling, ReplicasAreAFloorUnderDemandWithinMinAndMax) {
  EXPECT_EQ(desired_runners({0, 10, 4, 0}), 4) << "a warm pool with no job";
  EXPECT_EQ(desired_runners({0, 10, 4, 7}), 7) << "demand above the floor wins";
  EXPECT_EQ(desired_runners({2, 10, 4, 1}), 4) << "min + demand (3) below the floor";
  EXPECT_EQ(desired_runners({2, 10, 4, 3}), 5) << "min + demand (5) above the floor";
  EXPECT_EQ(desired_runners({1, 5, 0, 0}), 1) << "replicas 0: no floor, minRunners stays";
  EXPECT_EQ(desired_runners({1, 5, 9, 0}), 5) << "never past maxRunners";
  EXPECT_EQ(desired_runners({0, 10, -3, 2}), 2);
}

// The three writers never fight: whatever order demand and the floor move
// in, the result is the larger of the two (within [min, max]), so lowering
// one never takes away what the other asks for.
TEST(Scaling, FloorAndDemandCombineByMaximumWhateverTheirOrder) {
  for (std::int32_t floor = 0; floor <= 12; ++floor)
    for (std::int64_t jobs = 0; jobs <= 12; ++jobs) {
      const auto d = desired_runners({1, 10, floor, jobs});
      EXPECT_EQ(d, std::clamp<std::int64_t>(std::max<std::int64_t>(1 + jobs, floor), 1, 10));
      EXPECT_GE(d, desired_runners({1, 10, 0, jobs})) << "a floor never lowers demand";
      EXPECT_GE(d, desired_runners({1, 10, floor, 0})) << "demand never lowers the floor";
    }
}

// ---- spec.replicas over variants ----------------------------------------------------

TEST(ReplicaFloors, OneVariantGetsTheWholeTarget) {
  EXPECT_EQ(replica_floors(4, {{0, 10, 0, 1}}), (std::vector<std::int32_t>{4}));
  EXPECT_EQ(replica_floors(0, {{0, 10, 0, 1}}), (std::vector<std::int32_t>{1})) << "its own demand";
  EXPECT_EQ(replica_floors(40, {{0, 10, 0, 1}}), (std::vector<std::int32_t>{10})) << "capped at max";
}

TEST(ReplicaFloors, EachVariantKeepsItsOwnDemandWhenTheTargetIsBelowTheSum) {
  EXPECT_EQ(replica_floors(2, {{0, 10, 0, 3}, {1, 10, 0, 2}}), (std::vector<std::int32_t>{3, 3}));
}

TEST(ReplicaFloors, TheRestGoesWhereTheJobsAre) {
  // Demand wants 3 + 1; the target asks 8: 4 more, split 3:1 like the jobs.
  EXPECT_EQ(replica_floors(8, {{0, 10, 0, 3}, {0, 10, 0, 1}}), (std::vector<std::int32_t>{6, 2}));
  // No job anywhere: evenly, the first variants taking the odd one.
  EXPECT_EQ(replica_floors(5, {{0, 10, 0, 0}, {0, 10, 0, 0}}), (std::vector<std::int32_t>{3, 2}));
  EXPECT_EQ(replica_floors(1, {{0, 10, 0, 0}, {0, 10, 0, 0}, {0, 10, 0, 0}}),
            (std::vector<std::int32_t>{1, 0, 0}));
  // Rounding leftovers go to the heaviest first.
  EXPECT_EQ(replica_floors(4, {{0, 10, 0, 1}, {0, 10, 0, 2}}), (std::vector<std::int32_t>{1, 3}));
}

TEST(ReplicaFloors, AFullVariantPassesItsShareOn) {
  // "a" has most of the jobs but room for one more runner only.
  EXPECT_EQ(replica_floors(12, {{0, 4, 0, 3}, {0, 20, 0, 1}}), (std::vector<std::int32_t>{4, 8}));
  // Nowhere left to put the rest: every variant at its max.
  EXPECT_EQ(replica_floors(100, {{0, 4, 0, 0}, {2, 3, 0, 0}}), (std::vector<std::int32_t>{4, 3}));
}

TEST(ReplicaFloors, NeverPlacesMoreThanTheTargetAboveDemandNorPastAMaximum) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::vector<demand> vs(1 + rng() % 5);
    std::int64_t wanted = 0, capacity = 0;
    for (auto& v : vs) {
      v.min_runners = static_cast<std::int32_t>(rng() % 3);
      v.max_runners = v.min_runners + static_cast<std::int32_t>(rng() % 8);
      v.assigned_jobs = rng() % 4 == 0 ? 0 : rng() % 12;
      wanted += desired_runners(v);
      capacity += v.max_runners;
    }
    const auto replicas = static_cast<std::int32_t>(rng() % 40);
    const auto floors = replica_floors(replicas, vs);
    ASSERT_EQ(floors.size(), vs.size());
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < vs.size(); ++i) {
      EXPECT_GE(floors[i], desired_runners(vs[i]));
      EXPECT_LE(floors[i], vs[i].max_runners);
      sum += floors[i];
    }
    EXPECT_EQ(sum, std::max<std::int64_t>(wanted, std::min<std::int64_t>(replicas, capacity)));
  }
  // A huge target (kubectl scale --replicas=2147483647) ends at once.
  EXPECT_EQ(replica_floors(2147483647, {{0, 10, 0, 1 << 30}, {0, 10, 0, 1}}),
            (std::vector<std::int32_t>{10, 10}));
}

TEST(Scaling, CreatesTheShortfall) {
  auto plan = plan_scale(3, 10, {busy("a")});
  EXPECT_EQ(plan.create, 2);
  EXPECT_TRUE(plan.remove_idle.empty());
}

TEST(Scaling, FinishedRunnersHoldNoCapacityAndAreCleanedUp) {
  runner_view failed{"f", runner_phase::failed, false, false, false, 0};
  runner_view done{"d", runner_phase::succeeded, true, false, false, 0};
  auto plan = plan_scale(2, 10, {failed, done, idle("i")});
  EXPECT_EQ(plan.create, 1);
  EXPECT_EQ(plan.remove_finished, (std::vector<std::string>{"f", "d"}));
}

TEST(Scaling, ScaleDownTakesStartingRunnersFirstThenNewestIdle) {
  auto plan = plan_scale(
      1, 10, {idle("old", true, 100), idle("new", true, 200), idle("starting", false, 50), busy("b")});
  EXPECT_EQ(plan.create, 0);
  EXPECT_EQ(plan.remove_idle, (std::vector<std::string>{"starting", "new", "old"}));
}

TEST(Scaling, NeverRemovesABusyRunnerEvenWhenDesiredIsZero) {
  auto plan = plan_scale(0, 10, {busy("a"), busy("b"), idle("c")});
  EXPECT_EQ(plan.remove_idle, (std::vector<std::string>{"c"}));
}

// A Runner being deleted holds its slot until it is gone (idle, it may take a
// job until GitHub removes it; busy, it runs one), but only a busy one
// serves demand: the other is replaced once the bound allows.
TEST(Scaling, DeletingRunnersHoldTheirSlotUntilTheyAreGone) {
  runner_view draining{"d", runner_phase::running, true, true, true, 0};
  runner_view going{"g", runner_phase::pending, false, true, true, 0};
  EXPECT_EQ(plan_scale(2, 10, {draining, going}).create, 1);
  EXPECT_EQ(plan_scale(2, 2, {draining, going}).create, 0) << "both slots are held";
  EXPECT_EQ(plan_scale(2, 2, {draining}).create, 1) << "the idle one is gone";
}

// An idle runner whose removal is in flight keeps its place (GitHub may yet
// call it busy) and is among the runners going: no other goes in its stead.
TEST(Scaling, ARunnerBeingRemovedCountsAmongThoseGoing) {
  auto removing = idle("c");
  removing.removal_in_flight = true;
  auto plan = plan_scale(2, 10, {idle("a"), idle("b"), removing});
  EXPECT_TRUE(plan.remove_idle.empty());
  EXPECT_EQ(plan.create, 0) << "it keeps its place until answered";
  EXPECT_EQ(plan_scale(1, 10, {idle("a"), idle("b"), removing}).remove_idle, (std::vector<std::string>{"a"}));
}

// GitHub said a job completed: the job stops counting as demand at once, and
// so does its runner (or the idle runner that is the buffer is removed now
// and replaced once the phase lands: a surplus Runner, its JIT configuration
// and its pod, per completion). Its slot stays held until its phase is
// terminal: a replacement never takes the set past maxRunners.
TEST(Scaling, ARunnerWhoseJobCompletedServesNoDemandButHoldsItsSlot) {
  auto done = busy("done");
  done.job_completed = true;
  auto plan = plan_scale(1, 10, {done, idle("buffer", false)});
  EXPECT_EQ(plan.create, 0);
  EXPECT_TRUE(plan.remove_idle.empty());
  EXPECT_TRUE(plan.remove_finished.empty()) << "its actor writes Succeeded first";
  // Its phase lands: cleaned up, still nothing created or removed.
  done.phase = runner_phase::succeeded;
  plan = plan_scale(1, 10, {done, idle("buffer", false)});
  EXPECT_EQ(plan.create, 0);
  EXPECT_TRUE(plan.remove_idle.empty());
  EXPECT_EQ(plan.remove_finished, (std::vector<std::string>{"done"}));
  // Demand that remains is met: a completed runner never stands in for it ...
  done.phase = runner_phase::running;
  EXPECT_EQ(plan_scale(2, 10, {done, idle("buffer")}).create, 1);
  // ... but at the bound its replacement waits for its phase.
  EXPECT_EQ(plan_scale(2, 2, {done, idle("buffer")}).create, 0);
  done.phase = runner_phase::succeeded;
  EXPECT_EQ(plan_scale(2, 2, {done, idle("buffer")}).create, 1);
}

TEST(Scaling, CreatesNeverTakeTheHoldersPastMaxRunners) {
  EXPECT_EQ(plan_scale(5, 5, {}).create, 5);
  EXPECT_EQ(plan_scale(5, 3, {}).create, 3) << "desired above max (a bug upstream) is still bounded";
  EXPECT_EQ(plan_scale(5, 5, {busy("a"), busy("b")}).create, 3);
  runner_view unset{"u", runner_phase::unset, false, false, false, 0};
  EXPECT_EQ(plan_scale(5, 5, {unset, unset, unset, unset, unset}).create, 0);
}

TEST(Scaling, ARunnerIsRemovedByTheIdItsStatusOrItsJitSecretHolds) {
  EXPECT_EQ(registered_runner_id(7, 0), 7);
  EXPECT_EQ(registered_runner_id(0, 9), 9);  // registered, status not published yet
  EXPECT_EQ(registered_runner_id(7, 7), 7);
  EXPECT_EQ(registered_runner_id(0, 0), 0);  // not registered: deleted without asking GitHub
}

// Over random pools: a plan never removes a busy, finished-but-counted or
// deleting runner, and reaches the desired count whenever idle runners allow.
TEST(Scaling, RandomPoolsKeepTheInvariants) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 2000; ++round) {
    std::vector<runner_view> pool;
    int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      runner_view r;
      r.name = "r" + std::to_string(i);
      r.phase = static_cast<runner_phase>(rng() % 6);
      r.has_job = r.phase == runner_phase::running ? true : (rng() % 4 == 0);
      r.deleting = rng() % 5 == 0;
      r.pod_ready = rng() % 2 == 0;
      r.created = static_cast<std::int64_t>(rng() % 1000);
      r.job_completed = rng() % 6 == 0;
      r.removal_in_flight = rng() % 5 == 0;
      pool.push_back(r);
    }
    auto max_runners = static_cast<std::int32_t>(rng() % 10);
    auto desired = std::min(max_runners, static_cast<std::int32_t>(rng() % 10));
    auto plan = plan_scale(desired, max_runners, pool);
    std::int32_t occupied = 0, idle_count = 0, held = 0, going = 0;
    for (const auto& r : pool) {
      bool listed = std::count(plan.remove_idle.begin(), plan.remove_idle.end(), r.name) > 0;
      if (listed) {
        EXPECT_FALSE(r.busy()) << r.name;
        EXPECT_FALSE(r.deleting) << r.name;
        EXPECT_FALSE(r.finished()) << r.name;
        EXPECT_FALSE(r.job_completed) << r.name;
        EXPECT_FALSE(r.removal_in_flight) << r.name;
      }
      if (!r.finished()) ++held;
      const bool serves = !r.finished() && !r.job_completed;
      if (serves && (!r.deleting || r.busy())) ++occupied;
      if (serves && !r.deleting && !r.busy()) ++(r.removal_in_flight ? going : idle_count);
    }
    // The bound: creates never take the holders past max (when they were within it).
    if (held <= max_runners) {
      EXPECT_LE(held + plan.create, max_runners);
    }
    EXPECT_GE(plan.create, 0);
    auto after = occupied + plan.create - static_cast<std::int32_t>(plan.remove_idle.size());
    if (occupied <= desired) {
      EXPECT_EQ(after, std::min(desired, occupied + std::max(0, max_runners - held)));
    } else {
      // Those whose removal is in flight count as gone: never more than the
      // excess on its way out.
      const auto staying = occupied - going;
      EXPECT_EQ(staying - static_cast<std::int32_t>(plan.remove_idle.size()),
                std::max(std::min(desired, staying), staying - idle_count));
    }
  }
}

}  // namespace
}  // namespace octorun::runnerset
