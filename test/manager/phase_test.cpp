// The phase ownership rules of docs/runner-phases.md, exhaustively over every phase.
#include "actors/runner/phase.hpp"

#include <gtest/gtest.h>

namespace octorun::runner {
namespace {

using model::runner_phase;

constexpr runner_phase all_phases[] = {runner_phase::unset,   runner_phase::pending,
                                       runner_phase::running, runner_phase::succeeded,
                                       runner_phase::failed,  runner_phase::outdated};

pod_observation starting_pod() { return {true, false, false, 0, false}; }
pod_observation running_pod() { return {true, false, false, 0, true}; }
pod_observation exited_pod(int code) { return {true, false, true, code, false}; }

TEST(Phase, ParsesDeclaredPhasesAndTreatsLegacyUnknownAsUnset) {
  for (auto p : all_phases) EXPECT_EQ(model::parse_runner_phase(to_string(p)), p);
  EXPECT_EQ(model::parse_runner_phase("Unknown"), runner_phase::unset);
  EXPECT_EQ(model::parse_runner_phase("Busy"), std::nullopt);
}

TEST(Phase, ControllerPublishesPendingOnlyOverAnEmptyPhase) {
  EXPECT_EQ(controller_phase({runner_phase::unset, false, false}, starting_pod()), runner_phase::pending);
  EXPECT_EQ(controller_phase({runner_phase::unset, false, false}, running_pod()), runner_phase::pending);
  EXPECT_EQ(controller_phase({runner_phase::pending, false, false}, running_pod()), std::nullopt);
}

TEST(Phase, PodStatusNeverPromotesToRunning) {
  for (auto p : all_phases)
    for (auto pod : {starting_pod(), running_pod(), pod_observation{}})
      EXPECT_NE(controller_phase({p, false, false}, pod), runner_phase::running);
}

TEST(Phase, ControllerNeverDemotesARunningRunner) {
  for (auto pod : {starting_pod(), running_pod(), pod_observation{}})
    EXPECT_EQ(controller_phase({runner_phase::running, false, true}, pod), std::nullopt);
}

TEST(Phase, TerminalPhasesAreNeverLeft) {
  for (auto t : {runner_phase::succeeded, runner_phase::failed, runner_phase::outdated}) {
    for (auto pod : {starting_pod(), running_pod(), exited_pod(0), exited_pod(1), exited_pod(7)})
      EXPECT_EQ(controller_phase({t, false, false}, pod), std::nullopt);
    EXPECT_EQ(on_job_started({t, false, std::nullopt}, 42), job_started_verdict::skip_terminal);
  }
}

TEST(Phase, ADeletingRunnerIsNeverPromoted) {
  for (auto p : all_phases) {
    EXPECT_EQ(controller_phase({p, true, false}, exited_pod(0)), std::nullopt);
    if (!is_terminal(p)) {
      EXPECT_EQ(on_job_started({p, true, std::nullopt}, 42), job_started_verdict::skip_deleting);
    }
  }
}

TEST(Phase, RunnerExitDecidesTheTerminalPhase) {
  EXPECT_EQ(controller_phase({runner_phase::running, false, true}, exited_pod(0)), runner_phase::succeeded);
  EXPECT_EQ(controller_phase({runner_phase::pending, false, false}, exited_pod(outdated_exit_code)),
            runner_phase::outdated);
  EXPECT_EQ(controller_phase({runner_phase::pending, false, false}, exited_pod(2)),
            std::nullopt);  // on_pod_failure decides
}

TEST(Phase, JobStartedPromotesStartingAndIdleRunnersOnce) {
  EXPECT_EQ(on_job_started({runner_phase::unset, false, std::nullopt}, 42), job_started_verdict::promote);
  EXPECT_EQ(on_job_started({runner_phase::pending, false, std::nullopt}, 42), job_started_verdict::promote);
  EXPECT_EQ(on_job_started({runner_phase::running, false, 42}, 42), job_started_verdict::already_running);
  EXPECT_EQ(on_job_started({runner_phase::running, false, std::nullopt}, 42), job_started_verdict::promote);
}

TEST(Phase, PodFailuresRetryWithoutAJobAndFailWithOne) {
  EXPECT_EQ(on_pod_failure(false, 0, 5), pod_failure_action::recreate_pod);
  EXPECT_EQ(on_pod_failure(false, 3, 5), pod_failure_action::recreate_pod);
  EXPECT_EQ(on_pod_failure(false, 4, 5), pod_failure_action::mark_failed);
  EXPECT_EQ(on_pod_failure(true, 0, 5), pod_failure_action::mark_failed);
}

TEST(Phase, PodRetryBackoffDoublesUpToTheCap) {
  EXPECT_EQ(pod_retry_delay_seconds(0), 0);
  EXPECT_EQ(pod_retry_delay_seconds(1), 5);
  EXPECT_EQ(pod_retry_delay_seconds(2), 10);
  EXPECT_EQ(pod_retry_delay_seconds(3), 20);
  EXPECT_EQ(pod_retry_delay_seconds(20), 300);
}

TEST(Phase, JobCompletedFinishesTheRunnerOnce) {
  EXPECT_EQ(on_job_completed({runner_phase::running, false, 42}, 42), job_completed_verdict::finish);
  // Reordered: the completion arrives before the start.
  EXPECT_EQ(on_job_completed({runner_phase::pending, false, std::nullopt}, 42),
            job_completed_verdict::finish);
  EXPECT_EQ(on_job_completed({runner_phase::running, false, 7}, 42), job_completed_verdict::skip_other_job);
  EXPECT_EQ(on_job_completed({runner_phase::running, true, 42}, 42), job_completed_verdict::skip_deleting);
  for (auto t : {runner_phase::succeeded, runner_phase::failed, runner_phase::outdated})
    EXPECT_EQ(on_job_completed({t, false, 42}, 42), job_completed_verdict::already_finished);
  // And a start that arrives after the completion finds the runner terminal.
  EXPECT_EQ(on_job_started({runner_phase::succeeded, false, 42}, 42), job_started_verdict::skip_terminal);
}

}  // namespace
}  // namespace octorun::runner
