// The job path's optimistic lock, made deterministic: a Kubernetes pool that
// answers as the apiserver would when another writer slips in between the
// job path's read and its patch.
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <vector>

#include "actors/runner/runner_actor.hpp"
#include "adapters/kube/protocol.hpp"
#include "common/rfc3339.hpp"
#include "messages/jobs.hpp"
#include "test/support/caf_test_system.hpp"

namespace octorun::runner {
namespace {

// `deleting`: its set has deleted it and its finalizer holds it.
kube::object runner_at(const std::string& rv, const std::string& phase, bool deleting = false) {
  auto o = kube::parse_object(
      R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":"r","namespace":"ns","uid":"u",)"
      R"("resourceVersion":")" +
      rv + "\"" +
      (deleting ? R"(,"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["octorun.io/runner"])" : "") +
      R"(},"spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh",)"
      R"("template":{"spec":{"containers":[{"name":"runner","image":"x"}]}}},"status":{"phase":")" +
      phase + R"("}})");
  return *o;
}

// What the fake apiserver saw, and what it answers next.
struct script {
  std::vector<kube::object> reads;   // answers to successive GETs
  std::vector<std::string> patches;  // bodies of the PATCHes received
  int conflicts_left = 0;            // PATCHes answered 409 Conflict
  size_t next_read = 0;
};

caf::behavior fake_kube(caf::event_based_actor*, std::shared_ptr<script> s) {
  return {
      [=](kube::get_request&) -> kube::object_result {
        auto i = std::min(s->next_read++, s->reads.size() - 1);
        return s->reads[i];
      },
      [=](kube::patch_request& p) -> kube::object_result {
        s->patches.push_back(p.body);
        if (s->conflicts_left > 0) {
          --s->conflicts_left;
          return unexpected{kube::api_error{409, "Conflict", "the object has been modified", {}, false}};
        }
        return runner_at("99", "Running");
      },
  };
}

class JobPath : public ::testing::Test {
 protected:
  // The Runner actor of "r" on the fake apiserver, before any delivery.
  void spawn() {
    kube_ = t_.sys.spawn(fake_kube, s_);
    runner_actor_config cfg;
    cfg.ns = "ns";
    cfg.name = "r";
    cfg.kube = kube_;
    cfg.github = caf::actor_cast<protocols::runner_github_api>(kube_);  // unused here
    runner_ = caf::actor_cast<caf::actor>(spawn_runner(t_.sys, cfg));
  }
  static messages::job_started started() {
    messages::job_started js;
    js.job.job_id = 42;
    js.runner_name = "r";
    return js;
  }
  static messages::job_completed completed() {
    messages::job_completed done;
    done.job.job_id = 42;
    done.runner_name = "r";
    done.result = "success";
    return done;
  }
  // Reordered deliveries: job 42 completes on "r", then starts; the
  // completion writes Succeeded (the one patch).
  void complete_then_start_late() {
    spawn();
    // Reordered deliveries: the completion first, then the start.
    caf::anon_send(runner_, completed());
    caf::anon_send(runner_, started());
    t_.run();
    ASSERT_EQ(s_->patches.size(), 1u);
    EXPECT_NE(s_->patches[0].find(R"("phase":"Succeeded")"), std::string::npos) << s_->patches[0];
  }
  // Job 42 starts on "r".
  void start() {
    spawn();
    caf::anon_send(runner_, started());
    t_.run();
  }
  ~JobPath() override {
    caf::anon_send_exit(runner_, caf::exit_reason::kill);
    caf::anon_send_exit(kube_, caf::exit_reason::kill);
    t_.run();
  }
  test::caf_test_system t_;
  std::shared_ptr<script> s_ = std::make_shared<script>();
  caf::actor kube_, runner_;
};

TEST_F(JobPath, PromotesWithTheResourceVersionItRead) {
  s_->reads = {runner_at("5", "Pending")};
  start();
  ASSERT_EQ(s_->patches.size(), 1u);
  EXPECT_NE(s_->patches[0].find(R"("resourceVersion":"5")"), std::string::npos) << s_->patches[0];
  EXPECT_NE(s_->patches[0].find(R"("phase":"Running")"), std::string::npos);
  EXPECT_NE(s_->patches[0].find(R"("id":42)"), std::string::npos);
}

// GitHub's times of the job join status.timeline in the job path's own
// patch: no write of their own (docs/monitoring.md, "Job timeline").
TEST_F(JobPath, GitHubsTimesOfTheJobRideOnItsRunningAndSucceededPatches) {
  s_->reads = {runner_at("5", "Pending")};
  spawn();
  auto start = started();
  start.job.queued_at = 1'780'000'000;
  start.job.started_at = 1'780'000'030;
  caf::anon_send(runner_, start);
  t_.run();
  ASSERT_EQ(s_->patches.size(), 1u);
  EXPECT_NE(s_->patches[0].find(R"("queued":")" + format_rfc3339(1'780'000'000) + "\""), std::string::npos)
      << s_->patches[0];
  EXPECT_NE(s_->patches[0].find(R"("started":")" + format_rfc3339(1'780'000'030) + "\""), std::string::npos)
      << s_->patches[0];
}

TEST_F(JobPath, ACompletionWritesGitHubsTimeOfIt) {
  s_->reads = {runner_at("5", "Pending")};
  spawn();
  auto done = completed();
  done.job.completed_at = 1'780'000'090;
  caf::anon_send(runner_, done);
  t_.run();
  ASSERT_EQ(s_->patches.size(), 1u);
  EXPECT_NE(s_->patches[0].find(R"("timeline":{"completed":")" + format_rfc3339(1'780'000'090) + "\"}"),
            std::string::npos)
      << s_->patches[0];
}

TEST_F(JobPath, AStartWithoutGitHubsTimesWritesNoTimeline) {
  s_->reads = {runner_at("5", "Pending")};
  start();
  ASSERT_EQ(s_->patches.size(), 1u);
  EXPECT_EQ(s_->patches[0].find("timeline"), std::string::npos) << s_->patches[0];
}

TEST_F(JobPath, ATerminalWriteBetweenReadAndPatchIsNotUndone) {
  // Read at 5 (Pending); meanwhile the runner finished (Failed at 6), so the
  // patch conflicts; the re-read shows Failed and the job path stands down.
  s_->reads = {runner_at("5", "Pending"), runner_at("6", "Failed")};
  s_->conflicts_left = 1;
  start();
  EXPECT_EQ(s_->patches.size(), 1u) << "patched again after the runner became terminal";
  EXPECT_EQ(s_->next_read, 2u);
}

TEST_F(JobPath, ANonTerminalWriteInBetweenIsRetriedOnFreshState) {
  s_->reads = {runner_at("5", ""), runner_at("6", "Pending")};
  s_->conflicts_left = 1;
  start();
  ASSERT_EQ(s_->patches.size(), 2u);
  EXPECT_NE(s_->patches[1].find(R"("resourceVersion":"6")"), std::string::npos) << s_->patches[1];
}

TEST_F(JobPath, ARunnerAlreadyRunningThisJobIsLeftAlone) {
  auto o = kube::parse_object(
      R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":"r","namespace":"ns","resourceVersion":"7"},)"
      R"("spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh","template":{"spec":{"containers":[{"name":"runner","image":"x"}]}}},)"
      R"("status":{"phase":"Running","job":{"id":42}}})");
  s_->reads = {*o};
  start();
  EXPECT_TRUE(s_->patches.empty());
}

TEST_F(JobPath, ACompletedJobFinishesTheRunnerAndALateStartCannotRevive) {
  s_->reads = {runner_at("5", "Pending"), runner_at("6", "Succeeded")};
  ASSERT_NO_FATAL_FAILURE(complete_then_start_late());
  EXPECT_NE(s_->patches[0].find(R"("resourceVersion":"5")"), std::string::npos);
}

// What the actors log while it lives (the default logger's output).
class captured_log {
 public:
  captured_log() : previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("captured", sink_));
  }
  ~captured_log() { spdlog::set_default_logger(previous_); }
  std::string text() const {
    std::string out;
    for (const auto& line : sink_->last_formatted()) out += line;
    return out;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_ =
      std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  std::shared_ptr<spdlog::logger> previous_;
};

// The late start of a job that completed first finds its runner finished and
// already being deleted by its set (the set removes a finished runner at
// once). That is a finished runner, not one deleted while GitHub ran a job on
// it: the binary test that reorders deliveries tells the two apart by the log.
TEST_F(JobPath, ALateStartOnAFinishedRunnerBeingDeletedSaysFinished) {
  captured_log log;
  // Completed at 5 (Pending, so Succeeded is written); by the start's read the
  // set has deleted the finished runner.
  s_->reads = {runner_at("5", "Pending"), runner_at("7", "Succeeded", true)};
  ASSERT_NO_FATAL_FAILURE(complete_then_start_late());
  EXPECT_NE(log.text().find("job 42 started on a runner that has finished"), std::string::npos) << log.text();
  EXPECT_EQ(log.text().find("being deleted"), std::string::npos) << log.text();
}

TEST_F(JobPath, AStartOnARunnerDeletedBeforeItsJobEndedSaysBeingDeleted) {
  captured_log log;
  s_->reads = {runner_at("7", "Pending", true)};
  start();
  EXPECT_TRUE(s_->patches.empty()) << "a runner being deleted was promoted";
  EXPECT_NE(log.text().find("job 42 started on a runner that is being deleted"), std::string::npos)
      << log.text();
}

}  // namespace
}  // namespace octorun::runner
