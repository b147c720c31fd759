// The job path's optimistic lock, made deterministic: a Kubernetes pool that
// answers as the apiserver would when another writer slips in between the
// job path's read and its patch.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "actors/runner/runner_actor.hpp"
#include "messages/jobs.hpp"
#include "messages/kube.hpp"
#include "test/support/caf_test_system.hpp"

namespace octorun::runner {
namespace {

kube::object runner_at(const std::string& rv, const std::string& phase) {
  auto o = kube::parse_object(
      R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":"r","namespace":"ns","uid":"u",)"
      R"("resourceVersion":")" +
      rv +
      R"("},"spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh",)"
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
  void start() {
    kube_ = t_.sys.spawn(fake_kube, s_);
    runner_actor_config cfg;
    cfg.ns = "ns";
    cfg.name = "r";
    cfg.kube = kube_;
    cfg.github = caf::actor_cast<runnerset::runner_github_api>(kube_);  // unused here
    runner_ = spawn_runner(t_.sys, cfg);
    messages::job_started js;
    js.job.job_id = 42;
    js.runner_name = "r";
    caf::anon_send(runner_, js);
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
  kube_ = t_.sys.spawn(fake_kube, s_);
  runner_actor_config cfg;
  cfg.ns = "ns";
  cfg.name = "r";
  cfg.kube = kube_;
  cfg.github = caf::actor_cast<runnerset::runner_github_api>(kube_);  // unused here
  runner_ = spawn_runner(t_.sys, cfg);
  // Reordered deliveries: the completion first, then the start.
  messages::job_completed done;
  done.job.job_id = 42;
  done.runner_name = "r";
  done.result = "success";
  caf::anon_send(runner_, done);
  messages::job_started late;
  late.job.job_id = 42;
  late.runner_name = "r";
  caf::anon_send(runner_, late);
  t_.run();
  ASSERT_EQ(s_->patches.size(), 1u);
  EXPECT_NE(s_->patches[0].find(R"("phase":"Succeeded")"), std::string::npos) << s_->patches[0];
  EXPECT_NE(s_->patches[0].find(R"("resourceVersion":"5")"), std::string::npos);
}

}  // namespace
}  // namespace octorun::runner
