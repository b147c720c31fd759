// The RunnerSet actor on CAF's deterministic coordinator, against fake
// Kubernetes and GitHub pools: what it records in flight is released on
// every path (a reply with an error, a caf::error, a timeout), and the busy
// re-check and the scale-down window follow the actor's clock.
#include <algorithm>

#include "test/manager/runnerset_execute_fixture.hpp"

namespace octorun::runnerset {
namespace {

using namespace std::chrono_literals;
using namespace execute_fixture;

TEST_F(RunnerSetExecute, ACreateHoldsItsPlaceholderUntilTheWatchShowsIt) {
  start();
  EXPECT_EQ(s_->secret_reads, 1);
  demand(1);
  ASSERT_EQ(s_->created.size(), 1u);
  poke();
  EXPECT_EQ(s_->created.size(), 1u) << "created again while the first is in flight";
  watched(online(s_->created[0], 0));
  poke();
  EXPECT_EQ(s_->created.size(), 1u) << "the watched Runner is counted";
}

// The manager's reads in the set's namespace (pod_resources.hpp,
// manager_reads): its binding first, then the API server asked; nothing of
// the namespace is read and no runner made until it grants them; a read
// refused later (the binding deleted) binds them again.
TEST_F(RunnerSetExecute, ReadsNothingOfItsNamespaceUntilGrantedAndBindsAgainAfterARefusal) {
  cfg_.reads = {"octorun-manager-reads", "octorun-system", "octorun-manager"};
  cfg_.resync = 1min;  // a tick reads the credentials again
  s_->reads_allowed = false;
  start();
  demand(1);
  ASSERT_FALSE(s_->applied.empty());
  EXPECT_EQ(s_->applied.front(), "octorun-reads-linux");
  EXPECT_EQ(s_->reviews, 1);
  EXPECT_EQ(s_->secret_reads + s_->refused_reads, 0) << "read before the API server granted it";
  EXPECT_TRUE(s_->created.empty());
  t_.advance(100ms);  // asked again after a refusal
  EXPECT_EQ(s_->reviews, 2);
  s_->reads_allowed = true;
  t_.advance(200ms);
  EXPECT_EQ(s_->reviews, 3);
  EXPECT_EQ(s_->secret_reads, 1);
  EXPECT_EQ(s_->created.size(), 1u);

  // The binding deleted under it: the next read is refused, and the set
  // binds its reads again and asks before it reads.
  s_->reads_allowed = false;
  const auto bound = std::count(s_->applied.begin(), s_->applied.end(), "octorun-reads-linux");
  t_.advance(1min);
  EXPECT_EQ(s_->refused_reads, 1);
  EXPECT_EQ(std::count(s_->applied.begin(), s_->applied.end(), "octorun-reads-linux"), bound + 1);
  EXPECT_EQ(s_->reviews, 4);
  s_->reads_allowed = true;
  t_.advance(100ms);
  EXPECT_EQ(s_->reviews, 5);
  t_.advance(1min);  // the loaded credentials stay in use until the next tick reads them
  EXPECT_EQ(s_->secret_reads, 2);
}

// What answers the review is read as hostile: only status.allowed true
// grants the reads; a string, a missing status or field, or a status of
// another type is a refusal, asked again later.
TEST_F(RunnerSetExecute, AReviewAnswerThatIsNotAPlainTrueGrantsNothing) {
  cfg_.reads = {"octorun-manager-reads", "octorun-system", "octorun-manager"};
  s_->review_answer = R"({"status":{"allowed":"true"}})";
  start();
  demand(1);
  int asked = s_->reviews;
  EXPECT_EQ(asked, 1);
  for (const char* answer :
       {R"({"status":{}})", R"({"kind":"SelfSubjectAccessReview"})", R"({"status":"allowed"})",
        R"({"status":{"allowed":1}})", R"({"status":{"allowed":[true]}})"}) {
    s_->review_answer = answer;
    t_.advance(10s);  // past the backoff
    EXPECT_GT(s_->reviews, asked) << answer;
    asked = s_->reviews;
  }
  EXPECT_EQ(s_->secret_reads + s_->refused_reads, 0) << "read on an answer that granted nothing";
  EXPECT_TRUE(s_->created.empty());
  s_->review_answer = R"({"status":{"allowed":true}})";
  t_.advance(10s);
  EXPECT_EQ(s_->secret_reads, 1);
  EXPECT_EQ(s_->created.size(), 1u);
}

TEST_F(RunnerSetExecute, ACreateAnsweredWithAnErrorIsRetried) { create_fails(answer::reply_error); }
TEST_F(RunnerSetExecute, ACreateFailingInTheActorIsRetried) { create_fails(answer::actor_error); }
TEST_F(RunnerSetExecute, ACreateThatTimesOutIsRetried) { create_fails(answer::silence); }

// A create refused outright (422: it was not stored) frees its place at once.
TEST_F(RunnerSetExecute, ACreateRefusedOutrightIsRetriedAtOnce) {
  s_->create = answer::reply_error;
  s_->create_error = kube::api_error{422, "Invalid", "spec.template: Required value", {}, false};
  start();
  demand(1);
  ASSERT_EQ(s_->created.size(), 1u);
  poke();
  EXPECT_EQ(s_->created.size(), 2u);
  EXPECT_EQ(s_->runner_gets, 0);
}

// Creates go out in slow-start batches (create_pacing.hpp): after a refused
// create, one at a time, however many runners the set lacks; once creates
// succeed again each answer widens the window, and the rest go out.
TEST_F(RunnerSetExecute, AfterARefusedCreateCreatesGoOutOneAtATimeThenDoubleAgain) {
  s_->create = answer::reply_error;
  s_->create_error = kube::api_error{403, "Forbidden", "exceeded quota", {}, false};
  start();
  demand(1);
  demand(2);
  demand(3);
  EXPECT_EQ(s_->created.size(), 3u) << "one create per plan after a failure, not one per runner missing";
  s_->create = answer::ok;
  poke();
  EXPECT_EQ(s_->created.size(), 6u) << "the probe succeeded: room for the two runners still missing";
  poke();
  EXPECT_EQ(s_->created.size(), 6u) << "the creates out hold their places";
}

// Regression (bench/chaos, max-runners overshoot under watch-cut): a create
// whose answer was lost though the apiserver stored it is not made a second
// time; the GET finds it and the watch then shows it.
TEST_F(RunnerSetExecute, ACreateStoredWhoseAnswerWasLostIsNotMadeTwice) {
  s_->create = answer::silence;
  start();
  demand(1);
  ASSERT_EQ(s_->created.size(), 1u);
  const auto name = std::string(kube::parse_object(s_->created[0])->name);
  s_->stored.insert(name);
  t_.advance(cfg_.request_timeout + 1s);
  t_.advance(confirm_create_after);
  EXPECT_EQ(s_->runner_gets, 1);
  poke();
  EXPECT_EQ(s_->created.size(), 1u) << "found by the GET: it holds its place";
  watched(online(s_->created[0], 0));
  t_.advance(confirm_create_after);
  poke();
  EXPECT_EQ(s_->created.size(), 1u) << "the watched Runner is counted once";
  EXPECT_EQ(s_->runner_gets, 1) << "nothing left to confirm once watched";
}

// One idle runner, online, after a job that came and went.
class RunnerSetScaleDown : public RunnerSetExecute {
 protected:
  void idle_runner() {
    start();
    demand(1);
    ASSERT_EQ(s_->created.size(), 1u);
    watched(online(s_->created[0], 77));
    complete(1);
  }
  // The GitHub removal of the idle runner fails `how`: nothing is deleted,
  // and the next plan asks GitHub again.
  void removal_fails(answer how) {
    s_->github_delete = how;
    idle_runner();
    t_.advance(cfg_.scale_down_window + 1s);
    ASSERT_EQ(s_->github_deletes, 1);
    if (how == answer::silence) {
      poke();
      EXPECT_EQ(s_->github_deletes, 1) << "asked again while the first is in flight";
      t_.advance(cfg_.request_timeout + 1s);
    }
    poke();
    EXPECT_EQ(s_->github_deletes, 2) << "a failed removal stuck in flight";
    EXPECT_EQ(s_->deletes, 0);
  }
  // GitHub removed it, the Runner's DELETE fails `how`: the next plan removes it again.
  void delete_fails(answer how) {
    s_->remove = how;
    idle_runner();
    t_.advance(cfg_.scale_down_window + 1s);
    ASSERT_EQ(s_->github_deletes, 1);
    ASSERT_EQ(s_->deletes, 1);
    if (how == answer::silence) {
      poke();
      EXPECT_EQ(s_->github_deletes, 1) << "removed again while the DELETE is in flight";
      t_.advance(cfg_.request_timeout + 1s);
    }
    poke();
    EXPECT_EQ(s_->github_deletes, 2) << "a failed DELETE stuck in flight";
  }
};

TEST_F(RunnerSetScaleDown, IdleRunnersGoOnlyOnceTheWindowEndsByTheClock) {
  idle_runner();
  EXPECT_EQ(s_->github_deletes, 0) << "removed within the scale-down window";
  t_.advance(cfg_.scale_down_window + 1s);  // the wake-up plan() scheduled
  EXPECT_EQ(s_->github_deletes, 1);
  EXPECT_EQ(s_->deletes, 1) << "GitHub first, then the Runner";
}

TEST_F(RunnerSetScaleDown, ARunnerGitHubCallsBusyIsKeptUntilTheRecheck) {
  s_->github_busy = true;
  idle_runner();
  t_.advance(cfg_.scale_down_window + 1s);
  ASSERT_EQ(s_->github_deletes, 1);
  EXPECT_EQ(s_->deletes, 0) << "a busy runner was deleted";
  poke();
  EXPECT_EQ(s_->github_deletes, 1) << "asked again before busy_recheck";
  t_.advance(cfg_.busy_recheck);
  poke();
  EXPECT_EQ(s_->github_deletes, 2) << "not asked again once busy_recheck passed";
}

// Secrets are not watched: a runner whose status names no GitHub runner
// yet, and whose JIT configuration did not pass through this set's actor (an
// earlier leader's), is removed by the id its JIT Secret holds, GitHub first
// (it may have taken a job), never deleted as if registered nowhere.
TEST_F(RunnerSetScaleDown, ARunnerWithoutAPublishedIdIsRemovedByItsJitSecretsId) {
  start();
  demand(1);
  ASSERT_EQ(s_->created.size(), 1u);
  auto runner = online(s_->created[0], 0);
  const std::string jit = std::string(runner.name) + "-jit";
  s_->jit_secrets[jit] = R"({"kind":"Secret","metadata":{"name":")" + jit + R"("},"data":{"jitConfig":")" +
                         base64_encode("e30") + R"(","runnerId":")" + base64_encode("88") +
                         R"(","runnerName":")" + base64_encode(std::string(runner.name)) + R"("}})";
  // The leader goes before it saw its Runner; the next one's set sees it.
  caf::anon_send_exit(set_, caf::exit_reason::kill);
  t_.run();
  start();
  s_->github_busy = true;
  watched(runner);
  t_.advance(cfg_.scale_down_window + 1s);
  ASSERT_GE(s_->github_deletes, 1) << "a registered runner deleted without asking GitHub";
  EXPECT_EQ(s_->deletes, 0) << "a busy runner was deleted";
  EXPECT_EQ(s_->jits, 0) << "registered again";
  s_->github_busy = false;
  t_.advance(cfg_.busy_recheck);
  poke();
  EXPECT_EQ(s_->github_deleted, (std::vector<std::int64_t>{88}));
  EXPECT_EQ(s_->deletes, 1);
}

TEST_F(RunnerSetScaleDown, AGitHubRemovalAnsweredWithAnErrorIsRetried) { removal_fails(answer::reply_error); }
TEST_F(RunnerSetScaleDown, AGitHubRemovalFailingInTheActorIsRetried) { removal_fails(answer::actor_error); }
TEST_F(RunnerSetScaleDown, AGitHubRemovalThatTimesOutIsRetried) { removal_fails(answer::silence); }

TEST_F(RunnerSetScaleDown, ARunnerDeleteAnsweredWithAnErrorIsRetried) { delete_fails(answer::reply_error); }
TEST_F(RunnerSetScaleDown, ARunnerDeleteFailingInTheActorIsRetried) { delete_fails(answer::actor_error); }
TEST_F(RunnerSetScaleDown, ARunnerDeleteThatTimesOutIsRetried) { delete_fails(answer::silence); }

TEST_F(RunnerSetExecute, AStatusWriteAnsweredWithAnErrorIsRetried) {
  status_write_fails(answer::reply_error);
}
TEST_F(RunnerSetExecute, AStatusWriteFailingInTheActorIsRetried) { status_write_fails(answer::actor_error); }
TEST_F(RunnerSetExecute, AStatusWriteThatTimesOutIsRetried) { status_write_fails(answer::silence); }

TEST_F(RunnerSetExecute, AStatusComputedWhileOneIsInFlightIsWrittenAfterIt) {
  s_->status = answer::silence;
  start();
  ASSERT_EQ(s_->status_patches, 1);
  demand(1);  // new counts while the first write is in flight
  EXPECT_EQ(s_->status_patches, 1);
  s_->status = answer::ok;
  caf::anon_send(kube_, release_atom::value);
  t_.run();
  EXPECT_EQ(s_->status_patches, 2);
}

// With a hold (the manager's), the changes made after an accepted write go
// out together once the hold ends, in one write of the latest status.
TEST_F(RunnerSetExecute, StatusChangesWithinTheHoldAreWrittenOnceWhenItEnds) {
  cfg_.status_hold = 2s;
  start();
  ASSERT_EQ(s_->status_patches, 1) << "the first status waits for nothing";
  demand(1);
  demand(2);
  poke();
  EXPECT_EQ(s_->status_patches, 1) << "written within the hold";
  t_.advance(1s);
  EXPECT_EQ(s_->status_patches, 1) << "written within the hold";
  t_.advance(1s);
  ASSERT_EQ(s_->status_patches, 2) << "not written when the hold ended";
  EXPECT_NE(s_->statuses.back().find(R"("desiredReplicas":2)"), std::string::npos) << s_->statuses.back();
  t_.advance(10s);
  EXPECT_EQ(s_->status_patches, 2) << "written again with nothing changed";
}

}  // namespace
}  // namespace octorun::runnerset
