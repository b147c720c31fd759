// Which Event the Runner actor records for each phase transition it writes
// and for each retried pod failure (actors/runner/events.hpp).
#include <gtest/gtest.h>

#include "actors/runner/events.hpp"

namespace octorun::runner {
namespace {

using model::runner_phase;

constexpr runner_phase all_phases[] = {runner_phase::unset,   runner_phase::pending,
                                       runner_phase::running, runner_phase::succeeded,
                                       runner_phase::failed,  runner_phase::outdated};

TEST(RunnerEvents, NoEventWithoutAPhaseChange) {
  for (auto p : all_phases) EXPECT_EQ(event_for_transition(p, p, {}), std::nullopt);
  for (auto p : all_phases) EXPECT_EQ(event_for_transition(p, runner_phase::unset, {}), std::nullopt);
}

TEST(RunnerEvents, EveryChangeToADeclaredPhaseIsRecordedWithThePhaseAsReason) {
  for (auto from : all_phases)
    for (auto to : all_phases) {
      if (from == to || to == runner_phase::unset) continue;
      if (from == runner_phase::running && to == runner_phase::succeeded) continue;  // below
      auto e = event_for_transition(from, to, {});
      ASSERT_TRUE(e) << to_string(from) << " -> " << to_string(to);
      EXPECT_EQ(e->reason, to_string(to));
      EXPECT_EQ(e->action, "UpdatePhase");
      EXPECT_FALSE(e->note.empty());
      EXPECT_EQ(e->warning, to == runner_phase::failed || to == runner_phase::outdated) << to_string(to);
    }
}

TEST(RunnerEvents, RunningNamesTheAssignedJob) {
  transition_detail d;
  d.job_id = 4242;
  d.repository = "acme/app";
  d.job_name = "build";
  auto e = event_for_transition(runner_phase::pending, runner_phase::running, d);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->note, R"(GitHub assigned job 4242 "build" of acme/app)");
}

// One Normal Event per job: the Running Event named it; the runner's end, a
// write before the Runner is deleted, would say nothing new.
TEST(RunnerEvents, TheEndOfARunningRunnerIsNotAnEventOfItsOwn) {
  transition_detail job;
  job.job_id = 7;
  job.repository = "acme/app";
  job.message = "job 7 completed: success";
  EXPECT_EQ(event_for_transition(runner_phase::running, runner_phase::succeeded, job), std::nullopt);
  transition_detail exited;
  exited.exit_code = 0;
  EXPECT_EQ(event_for_transition(runner_phase::running, runner_phase::succeeded, exited), std::nullopt);
  // Its failure is a Warning all the same.
  EXPECT_TRUE(event_for_transition(runner_phase::running, runner_phase::failed, job));
}

// A job that completed before its start was written has no Running Event:
// its Succeeded names it.
TEST(RunnerEvents, AJobsCompletionWithoutItsRunningNamesTheJob) {
  transition_detail job;
  job.job_id = 7;
  job.repository = "acme/app";
  job.message = "job 7 completed: success";
  for (auto from : {runner_phase::unset, runner_phase::pending}) {
    auto e = event_for_transition(from, runner_phase::succeeded, job);
    ASSERT_TRUE(e) << to_string(from);
    EXPECT_EQ(e->note, "The runner finished job 7 of acme/app: job 7 completed: success");
  }
}

TEST(RunnerEvents, SucceededWithoutAJobSaysHowTheRunnerEnded) {
  transition_detail exited;
  exited.exit_code = 0;
  EXPECT_EQ(event_for_transition(runner_phase::pending, runner_phase::succeeded, exited)->note,
            "The runner exited with code 0");
}

TEST(RunnerEvents, FailedCarriesTheReasonForTheFailure) {
  transition_detail d;
  d.message = "the runner's pod failed 5 times (last exit code 3)";
  auto e = event_for_transition(runner_phase::pending, runner_phase::failed, d);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->warning);
  EXPECT_EQ(e->note, "The runner failed: the runner's pod failed 5 times (last exit code 3)");
}

TEST(RunnerEvents, ARetriedPodFailureIsAWarningWithTheExitCodeAndBackoff) {
  auto first = event_for_pod_retry(3, 1, 5, 0);
  EXPECT_TRUE(first.warning);
  EXPECT_EQ(first.reason, "PodFailed");
  EXPECT_EQ(first.action, "RecreatePod");
  EXPECT_EQ(first.note, "The runner container exited with code 3 (failure 1 of 5); recreating the pod now");
  EXPECT_EQ(event_for_pod_retry(1, 2, 5, 5).note,
            "The runner container exited with code 1 (failure 2 of 5); recreating the pod in 5 s");
}

}  // namespace
}  // namespace octorun::runner
