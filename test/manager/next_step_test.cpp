// The Runner actor's reconcile, step by step, over the situations that
// matter: provisioning, pod failures, phase ownership and deletion of busy
// and idle runners.
#include "actors/runner/next_step.hpp"

#include <gtest/gtest.h>

#include "actors/runner/observe.hpp"

namespace octorun::runner {
namespace {

using model::runner_phase;

using namespace std::chrono_literals;
const auto t0 = std::chrono::steady_clock::time_point{} + 1h;

observation provisioned() {
  observation o;
  o.has_finalizer = true;
  o.secret_exists = true;
  o.github_runner_id = 7;
  o.now = t0;
  return o;
}

pod_observation pod(bool ready = false) { return {true, false, false, 0, ready}; }
pod_observation exited(int code) { return {true, false, true, code, false}; }

// `o` waits until `at`, and then takes the step `then`.
void expect_waits_until(observation o, std::chrono::steady_clock::time_point at, step_kind then) {
  auto s = next_step(o);
  EXPECT_EQ(s.kind, step_kind::wait_until);
  EXPECT_EQ(s.at, at);
  o.now = at;
  EXPECT_EQ(next_step(o).kind, then);
}

// A provisioned runner with a ready pod, being deleted.
observation being_deleted(runner_phase current, bool has_job) {
  auto o = provisioned();
  o.deleting = true;
  o.current = current;
  o.has_job = has_job;
  o.pod = pod(true);
  return o;
}

TEST(NextStep, NewRunnerGetsAFinalizerThenItsJitConfigThenItsPod) {
  observation o;
  o.now = t0;
  EXPECT_EQ(next_step(o).kind, step_kind::add_finalizer);
  o.has_finalizer = true;
  EXPECT_EQ(next_step(o).kind, step_kind::provision);
  o.secret_exists = true;
  EXPECT_EQ(next_step(o).kind, step_kind::create_pod);
  o.pod = pod();
  auto s = next_step(o);
  EXPECT_EQ(s.kind, step_kind::publish_status);
  EXPECT_EQ(s.phase_to_publish, runner_phase::pending);
  o.current = runner_phase::pending;
  EXPECT_EQ(next_step(o).kind, step_kind::none);
}

// An idle runner's readiness (Running says it for a busy one: below).
TEST(NextStep, ReadinessIsPublishedWithoutTouchingThePhase) {
  auto o = provisioned();
  o.current = runner_phase::pending;
  o.pod = pod(true);
  auto s = next_step(o);
  EXPECT_EQ(s.kind, step_kind::publish_status);
  EXPECT_EQ(s.phase_to_publish, std::nullopt);
  EXPECT_TRUE(s.pod_ready);
  o.status_pod_ready = true;
  EXPECT_EQ(next_step(o).kind, step_kind::none);
  // Not ready any more: said at once.
  o.pod = pod(false);
  s = next_step(o);
  EXPECT_EQ(s.kind, step_kind::publish_status);
  EXPECT_FALSE(s.pod_ready);
}

// A pod that just became ready waits the settle window before its readiness
// is published: a job handed to the runner meanwhile writes Running, which
// carries the readiness, so there is no patch of its own.
TEST(NextStep, ReadinessWaitsForARunningWriteThatSaysIt) {
  auto o = provisioned();
  o.current = runner_phase::pending;
  o.pod = pod(true);
  o.pod_ready_since = t0;
  const limits l{5, 2000ms};
  auto s = next_step(o, l);
  EXPECT_EQ(s.kind, step_kind::wait_until);
  EXPECT_EQ(s.at, t0 + 2s);
  // Idle all along: published after the window.
  o.now = t0 + 2s;
  EXPECT_EQ(next_step(o, l).kind, step_kind::publish_status);
  // The job path wrote Running (with podReady) meanwhile: nothing left to say.
  o.current = runner_phase::running;
  o.has_job = true;
  o.pod.marked_busy = true;
  o.status_pod_ready = true;
  EXPECT_EQ(next_step(o, l).kind, step_kind::none);
  // Running says the runner is up: its pod going unready is no patch...
  o.pod.ready = false;
  EXPECT_EQ(next_step(o, l).kind, step_kind::none);
  // ... but a pod first seen ready after the job came is (status.podReady
  // also says the pod existed).
  o.pod.ready = true;
  o.status_pod_ready = false;
  auto s2 = next_step(o, l);
  EXPECT_EQ(s2.kind, step_kind::publish_status);
  EXPECT_EQ(s2.phase_to_publish, std::nullopt);
  EXPECT_TRUE(s2.pod_ready);
}

TEST(NextStep, ExitZeroSucceedsAndExitSevenIsOutdated) {
  auto o = provisioned();
  o.current = runner_phase::running;
  o.has_job = true;
  o.pod = exited(0);
  EXPECT_EQ(next_step(o).phase_to_publish, runner_phase::succeeded);
  o.pod = exited(outdated_exit_code);
  EXPECT_EQ(next_step(o).phase_to_publish, runner_phase::outdated);
}

TEST(NextStep, AFailedIdlePodIsRecordedOnceThenDeletedThenRecreatedAfterBackoff) {
  auto o = provisioned();
  o.current = runner_phase::pending;
  o.pod = exited(1);
  EXPECT_EQ(next_step(o).kind, step_kind::record_pod_failure);
  o.failures = 1;
  o.pod_failure_recorded = true;
  EXPECT_EQ(next_step(o).kind, step_kind::delete_pod);
  o.pod.deleting = true;
  EXPECT_EQ(next_step(o).kind, step_kind::none) << "a terminating pod is not judged again";
  o.pod = {};
  o.pod_failure_recorded = false;
  o.retry_not_before = t0 + 5s;
  expect_waits_until(o, t0 + 5s, step_kind::create_pod);
}

TEST(NextStep, TheLastAllowedFailureMarksTheRunnerFailed) {
  auto o = provisioned();
  o.current = runner_phase::pending;
  o.pod = exited(1);
  o.failures = 4;
  EXPECT_EQ(next_step(o, {5}).kind, step_kind::mark_failed);
  // Counting is stable once this pod's failure is recorded.
  o.failures = 4;
  o.pod_failure_recorded = true;
  EXPECT_EQ(next_step(o, {5}).kind, step_kind::delete_pod);
}

TEST(NextStep, ARunnerWhoseJobPodDiesIsFailedNotRetried) {
  auto o = provisioned();
  o.current = runner_phase::running;
  o.has_job = true;
  o.pod = exited(137);
  EXPECT_EQ(next_step(o).kind, step_kind::mark_failed);
  o.pod = {};
  o.pod_seen = true;
  EXPECT_EQ(next_step(o).kind, step_kind::mark_failed);
}

TEST(NextStep, AJobBeforeThePodEverExistedGetsThePodNotAFailure) {
  // GitHub handed the runner a job before its pod appeared (the pod's watch
  // event is late, or the runner connected early): the pod is made and the
  // runner stays Running; it is not mistaken for a pod that vanished.
  auto o = provisioned();
  o.current = runner_phase::running;
  o.has_job = true;
  o.pod = {};
  EXPECT_EQ(next_step(o).kind, step_kind::create_pod);
  o.status_pod_ready = true;  // what observe() turns into pod_seen after a restart
  o.pod_seen = true;
  EXPECT_EQ(next_step(o).kind, step_kind::mark_failed);
}

TEST(NextStep, FinishedRunnersAreLeftForTheRunnerSet) {
  for (auto p : {runner_phase::succeeded, runner_phase::failed, runner_phase::outdated}) {
    auto o = provisioned();
    o.current = p;
    o.pod = exited(1);
    EXPECT_EQ(next_step(o).kind, step_kind::none);
  }
}

TEST(NextStep, DeletionRemovesFromGitHubBeforeThePodIsTouched) {
  auto o = provisioned();
  o.deleting = true;
  o.current = runner_phase::pending;
  o.pod = pod(true);
  EXPECT_EQ(next_step(o).kind, step_kind::remove_from_github);
  // Then the finalizer goes; the Pod and Secret go with the Runner (the
  // garbage collector follows their ownerReferences).
  o.removal = github_removal::removed;
  EXPECT_EQ(next_step(o).kind, step_kind::remove_finalizer);
}

TEST(NextStep, ABusyRunnerBeingDeletedKeepsItsPodAndIsAskedAgainLater) {
  auto o = being_deleted(runner_phase::running, true);
  o.removal = github_removal::busy;
  o.retry_not_before = t0 + 30s;
  auto s = next_step(o);
  EXPECT_EQ(s.kind, step_kind::wait_until);
  o.now = t0 + 30s;
  EXPECT_EQ(next_step(o).kind, step_kind::remove_from_github);
  // Whatever happens, while GitHub has not confirmed, the pod stays: it is
  // not deleted, and the finalizer that keeps the garbage collector off it stays.
  for (auto removal : {github_removal::not_tried, github_removal::busy}) {
    o.removal = removal;
    EXPECT_NE(next_step(o).kind, step_kind::delete_pod);
    EXPECT_NE(next_step(o).kind, step_kind::remove_finalizer);
  }
}

// A Runner being deleted that holds its finalizer and nothing else.
observation deleted_bare() {
  observation o;
  o.now = t0;
  o.has_finalizer = true;
  o.deleting = true;
  return o;
}

TEST(NextStep, AnUnregisteredRunnerIsDeletedWithoutAskingGitHub) {
  auto o = deleted_bare();
  EXPECT_EQ(next_step(o).kind, step_kind::remove_finalizer);
}

// A JIT request whose answer never came (a 5xx after GitHub did the work, a
// timeout), or an earlier leader's: nothing records a registration, yet
// GitHub may hold one under the Runner's name. The name is looked up once
// before the Runner goes, and what is found is removed first.
TEST(NextStep, ARunnerWhoseRegistrationIsUnknownIsLookedUpOnGitHubBeforeItGoes) {
  auto o = deleted_bare();
  o.registration_unknown = true;
  EXPECT_EQ(next_step(o).kind, step_kind::find_on_github);
  // Found: removed like any registered runner, then the finalizer goes.
  auto found = o;
  found.registration_unknown = false;
  found.github_runner_id = 12;
  EXPECT_EQ(next_step(found).kind, step_kind::remove_from_github);
  found.removal = github_removal::removed;
  EXPECT_EQ(next_step(found).kind, step_kind::remove_finalizer);
  // None found: nothing to remove.
  auto none = o;
  none.registration_unknown = false;
  EXPECT_EQ(next_step(none).kind, step_kind::remove_finalizer);
  // A spent budget: asked again once it resets, never let go unasked.
  auto spent = o;
  spent.removal = github_removal::rate_limited;
  spent.retry_not_before = t0 + 30s;
  expect_waits_until(spent, t0 + 30s, step_kind::find_on_github);
}

TEST(NextStep, AnUnknownRegistrationIsNoReasonToLookUpARunnerThatIsNotBeingDeleted) {
  observation o;
  o.now = t0;
  o.has_finalizer = true;
  o.registration_unknown = true;
  EXPECT_EQ(next_step(o).kind, step_kind::provision)
      << "a JIT request for a name GitHub holds is refused with the holder named (jit_conflict.hpp)";
}

// GitHub holds the name for a runner not shown to be this Runner's
// (jit_conflict.hpp, issue 32): it is left alone, and the Runner fails so
// its set makes another under a new name; a Runner that failed so, once
// deleted, looks nothing up by name (that lookup would find the same
// holder) and simply goes.
TEST(NextStep, ARunnerWhoseNameIsTakenFailsAndGoesWithoutALookUp) {
  observation o;
  o.now = t0;
  o.has_finalizer = true;
  o.name_taken = true;
  EXPECT_EQ(next_step(o).kind, step_kind::mark_failed);
  o.current = runner_phase::failed;
  EXPECT_EQ(next_step(o).kind, step_kind::none) << "left for its set to delete";

  model::runner failed;
  failed.metadata.deleting = true;
  failed.metadata.finalizers = {"octorun.io/runner"};
  failed.status.phase = model::runner_phase::failed;
  failed.status.reason = "NameTaken";
  actor_memory fresh;  // a later actor (a new leader): it knows nothing of the conflict
  auto seen = observe(failed, nullptr, nullptr, fresh, t0);
  EXPECT_FALSE(seen.registration_unknown);
  EXPECT_EQ(next_step(seen).kind, step_kind::remove_finalizer);
  failed.status.reason = "RetriesExhausted";
  EXPECT_EQ(next_step(observe(failed, nullptr, nullptr, fresh, t0)).kind, step_kind::find_on_github)
      << "any other unknown registration is still looked up";
}

// GitHub generated a JIT configuration but its Secret was not created (the
// create failed, or the Runner was deleted meanwhile): the configuration is
// stored, never generated again (a second registration of the name), and a
// deletion removes the registration from GitHub (otherwise nobody would).
TEST(NextStep, AGeneratedJitConfigIsStoredNotGeneratedAgain) {
  observation o;
  o.now = t0;
  o.has_finalizer = true;
  o.jit_unstored = true;
  o.github_runner_id = 9;
  EXPECT_EQ(next_step(o).kind, step_kind::store_secret);
  o.secret_exists = true;
  EXPECT_EQ(next_step(o).kind, step_kind::create_pod);
}

TEST(NextStep, ARunnerDeletedBeforeItsJitConfigWasStoredIsRemovedFromGitHub) {
  auto o = deleted_bare();
  o.jit_unstored = true;
  o.github_runner_id = 9;
  EXPECT_EQ(next_step(o).kind, step_kind::remove_from_github);
  o.removal = github_removal::removed;
  EXPECT_EQ(next_step(o).kind, step_kind::remove_finalizer);
}

// GitHub removes a JIT runner itself once its one job is done: deleting a
// runner that ran its job to the end asks GitHub nothing (one call per job:
// its JIT configuration). Every other runner GitHub may still hold is
// removed first.
TEST(NextStep, ARunnerThatRanItsJobIsNotRemovedFromGitHubAgain) {
  auto o = being_deleted(runner_phase::succeeded, true);
  EXPECT_EQ(next_step(o).kind, step_kind::remove_finalizer);
  for (auto p : {runner_phase::unset, runner_phase::pending, runner_phase::running, runner_phase::failed,
                 runner_phase::outdated}) {
    o.current = p;
    EXPECT_EQ(next_step(o).kind, step_kind::remove_from_github) << to_string(p);
  }
  o.current = runner_phase::succeeded;
  o.has_job = false;  // exited 0 without ever taking a job
  EXPECT_EQ(next_step(o).kind, step_kind::remove_from_github);
}

// The finalizer guards the runner's removal from GitHub; GitHub removed a
// runner that ran its job to the end itself, so its finalizer goes as soon
// as it is Succeeded, beside the set's DELETE, and is not held again.
// Every other runner keeps it until it is deleted and GitHub confirms.
TEST(NextStep, ARunnerThatRanItsJobReleasesItsFinalizerBeforeItsDeletion) {
  auto o = provisioned();
  o.current = runner_phase::succeeded;
  o.has_job = true;
  o.pod = exited(0);
  EXPECT_EQ(next_step(o).kind, step_kind::remove_finalizer);
  o.has_finalizer = false;
  EXPECT_EQ(next_step(o).kind, step_kind::none);
  o.deleting = true;
  EXPECT_EQ(next_step(o).kind, step_kind::none);
  // Not to the end: held until the deletion, then GitHub first.
  for (auto p : {runner_phase::running, runner_phase::failed, runner_phase::outdated}) {
    auto held = provisioned();
    held.current = p;
    held.has_job = true;
    held.pod = p == runner_phase::running ? pod(true) : exited(1);
    held.pod.marked_busy = true;
    EXPECT_NE(next_step(held).kind, step_kind::remove_finalizer) << to_string(p);
  }
  auto idle = provisioned();
  idle.current = runner_phase::succeeded;  // exited 0 without a job
  idle.pod = exited(0);
  EXPECT_EQ(next_step(idle).kind, step_kind::none);
  idle.has_finalizer = false;
  EXPECT_EQ(next_step(idle).kind, step_kind::add_finalizer);
}

// The server answered the release: the set's DELETE, seen after that
// answer but older, still lists the finalizer; the release is not sent again.
TEST(NextStep, AReleasedFinalizerIsNotReleasedAgainOnAnOlderWatchEvent) {
  model::runner older;
  older.metadata.finalizers = {model::runner_finalizer};
  older.metadata.deleting = true;
  older.status.phase = model::runner_phase::succeeded;
  older.status.job = model::job_ref{};
  older.status.job->id = 42;
  older.status.runner_id = 7;
  actor_memory memory;
  auto o = observe(older, nullptr, nullptr, memory, t0);
  EXPECT_TRUE(o.has_finalizer);
  EXPECT_EQ(next_step(o).kind, step_kind::remove_finalizer);
  memory.finalizer_released = true;
  o = observe(older, nullptr, nullptr, memory, t0);
  EXPECT_FALSE(o.has_finalizer);
  EXPECT_EQ(next_step(o).kind, step_kind::none);
}

// GitHub's budget is spent: a runner that can no longer run a job (its
// runner process ended, or it is terminal) does not wait for the reset: the
// RunnerSet takes its removal over and the Runner goes now. One whose
// process may still take a job keeps its pod until GitHub confirms.
TEST(NextStep, ASpentBudgetDefersTheRemovalOfARunnerThatCanRunNoJob) {
  auto o = provisioned();
  o.deleting = true;
  o.current = runner_phase::failed;
  o.pod = exited(1);
  o.removal = github_removal::rate_limited;
  o.retry_not_before = t0 + 30min;
  EXPECT_EQ(next_step(o).kind, step_kind::defer_removal);
  o.removal = github_removal::deferred;
  EXPECT_EQ(next_step(o).kind, step_kind::remove_finalizer);
  // Idle and online: it may take a job at any moment, so it waits.
  o = being_deleted(runner_phase::pending, false);
  o.removal = github_removal::rate_limited;
  o.retry_not_before = t0 + 30min;
  expect_waits_until(o, t0 + 30min, step_kind::remove_from_github);
  // Never started (no pod): it can run nothing.
  o.pod = {};
  EXPECT_EQ(next_step(o).kind, step_kind::defer_removal);
}

TEST(NextStep, ABusyRunnersPodIsMarkedFirstAndOnce) {
  auto o = provisioned();
  o.current = runner_phase::pending;
  o.pod = pod(true);
  o.status_pod_ready = true;
  EXPECT_EQ(next_step(o).kind, step_kind::none) << "an idle runner's pod is left alone";
  // The job path wrote Running + the job: the pod gets the label the set's
  // PodDisruptionBudget selects before anything else.
  o.current = runner_phase::running;
  o.has_job = true;
  EXPECT_EQ(next_step(o).kind, step_kind::mark_pod_busy);
  o.pod.marked_busy = true;
  EXPECT_EQ(next_step(o).kind, step_kind::none);
  // A pod whose runner exited needs no protection any more.
  o.pod = exited(0);
  EXPECT_NE(next_step(o).kind, step_kind::mark_pod_busy);
}

TEST(NextStep, ItIsIdempotent) {
  auto o = provisioned();
  o.pod = pod(true);
  EXPECT_EQ(next_step(o), next_step(o));
}

}  // namespace
}  // namespace octorun::runner
