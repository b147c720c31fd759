// The webhook intake's sweep decisions (actors/runnerset/webhook_sweep.hpp):
// what GitHub's list of queued and running work changes in a set's demand.
#include "actors/runnerset/webhook_sweep.hpp"

#include <gtest/gtest.h>

namespace octorun::runnerset {
namespace {

messages::workflow_job job(std::int64_t id, std::int64_t run, std::string status, std::string runner = "") {
  return {id, run, "acme/app", std::move(status), {"self-hosted", "linux"}, std::move(runner), ""};
}

followed_job in_run(std::int64_t run) { return {run, "acme/app"}; }

TEST(WebhookSweep, AQueuedOrRunningJobNoDeliveryBroughtIsFound) {
  messages::active_work listed{
      {10, 11, 12}, {job(1, 10, "queued"), job(2, 11, "in_progress", "r-2"), job(3, 12, "queued")}};
  auto changes = reconcile_demand({{3, in_run(12)}}, {3}, {}, listed);
  ASSERT_EQ(changes.found.size(), 2u);
  EXPECT_EQ(changes.found[0].id, 1);
  EXPECT_EQ(changes.found[1].id, 2);
  EXPECT_TRUE(changes.ended.empty());
  EXPECT_TRUE(changes.finished.empty());
}

TEST(WebhookSweep, AJobSeenCompleteIsNotDemandAgain) {
  messages::active_work listed{{10}, {job(1, 10, "queued")}};
  EXPECT_TRUE(reconcile_demand({}, {}, {1}, listed).found.empty());
}

TEST(WebhookSweep, AJobItsRunnersRunIsNotDemandAgain) {
  // Followed (a Runner's status.job) without being counted: a new leader.
  messages::active_work listed{{10}, {job(1, 10, "in_progress", "r-1")}};
  EXPECT_TRUE(reconcile_demand({{1, in_run(10)}}, {}, {}, listed).found.empty());
}

TEST(WebhookSweep, JobsNoRunnerMayTakeYetAreNotDemand) {
  messages::active_work listed{{10}, {job(1, 10, "waiting"), job(2, 10, "pending"), job(3, 10, "requested")}};
  EXPECT_TRUE(reconcile_demand({}, {}, {}, listed).found.empty());
}

TEST(WebhookSweep, AFollowedJobListedCompletedFinishesWithItsRunner) {
  // Job 1 was counted, job 2 ran on one of the set's Runners; both runs ended.
  auto done = job(1, 10, "completed", "r-1");
  done.conclusion = "success";
  messages::active_work listed{{}, {done, job(2, 20, "completed", "r-2"), job(3, 20, "completed", "other")}};
  auto changes = reconcile_demand({{1, in_run(10)}, {2, in_run(20)}}, {1}, {}, listed);
  ASSERT_EQ(changes.finished.size(), 2u);
  EXPECT_EQ(changes.finished[0].id, 1);
  EXPECT_EQ(changes.finished[1].id, 2);
  EXPECT_TRUE(changes.ended.empty());
  EXPECT_TRUE(changes.found.empty());
}

TEST(WebhookSweep, ACountedJobWhoseRunIsOverButUnlistedStopsCounting) {
  // Run 20 (job 2) is no longer queued or running, and its jobs could not be listed.
  messages::active_work listed{{10}, {}};
  auto changes = reconcile_demand({{1, in_run(10)}, {2, in_run(20)}}, {1, 2}, {}, listed);
  EXPECT_EQ(changes.ended, std::vector<std::int64_t>{2});
  EXPECT_TRUE(changes.found.empty());
}

TEST(WebhookSweep, AJobCountedAfterTheSweepBeganIsKept) {
  // Job 3 came (a delivery) while the listing was under way; its run is not listed yet.
  messages::active_work listed{{}, {}};
  EXPECT_TRUE(reconcile_demand({}, {3}, {}, listed).ended.empty());
}

TEST(WebhookSweep, AJobEndedByADeliveryMeanwhileIsNotEndedTwice) {
  messages::active_work listed{{}, {job(1, 10, "completed", "r-1")}};
  auto changes = reconcile_demand({{1, in_run(10)}}, {}, {1}, listed);
  EXPECT_TRUE(changes.ended.empty());
  EXPECT_TRUE(changes.finished.empty());
}

TEST(WebhookSweep, AJobWithoutARunIsNeverEndedByTheRunListing) {
  messages::active_work listed{{}, {}};
  EXPECT_TRUE(reconcile_demand({{1, in_run(0)}}, {1}, {}, listed).ended.empty());
}

TEST(WebhookSweep, AJobListedTwiceIsFoundOnce) {
  messages::active_work listed{{10}, {job(1, 10, "queued"), job(1, 10, "queued")}};
  EXPECT_EQ(reconcile_demand({}, {}, {}, listed).found.size(), 1u);
}

TEST(WebhookSweep, TheRequestFollowsTheRunsOfFollowedJobsAndSkipsListedRuns) {
  auto ask =
      sweep_request_for({{1, in_run(10)}, {2, in_run(10)}, {3, in_run(0)}, {4, {7, "acme/lib"}}}, {30});
  EXPECT_EQ(ask.followed_runs, (std::map<std::int64_t, std::string>{{7, "acme/lib"}, {10, "acme/app"}}));
  EXPECT_EQ(ask.listed_runs, std::set<std::int64_t>{30});
}

TEST(WebhookSweep, AFoundJobTakesTheRouteItsDeliveryWould) {
  auto queued = job_message_of(job(1, 10, "queued"));
  ASSERT_TRUE(std::holds_alternative<messages::job_available>(queued));
  const auto& info = messages::job_of(queued);
  EXPECT_EQ(info.job_id, 1);
  EXPECT_EQ(info.run_id, 10);
  EXPECT_EQ(info.repository, "acme/app");
  EXPECT_EQ(info.source, messages::job_source::webhook);
  EXPECT_TRUE(info.swept);
  auto running = job_message_of(job(2, 11, "in_progress", "r-2"));
  ASSERT_TRUE(std::holds_alternative<messages::job_started>(running));
  EXPECT_EQ(std::get<messages::job_started>(running).runner_name, "r-2");
  auto done = job(4, 13, "completed", "r-4");
  done.conclusion = "failure";
  auto completed = job_message_of(done);
  ASSERT_TRUE(std::holds_alternative<messages::job_completed>(completed));
  EXPECT_EQ(std::get<messages::job_completed>(completed).runner_name, "r-4");
  EXPECT_EQ(std::get<messages::job_completed>(completed).result, "failure");
  // Running, but no runner named (GitHub has not said which yet): demand.
  EXPECT_TRUE(std::holds_alternative<messages::job_available>(job_message_of(job(3, 12, "in_progress"))));
}

}  // namespace
}  // namespace octorun::runnerset
