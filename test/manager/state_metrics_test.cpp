#include "actors/metrics/state_metrics.hpp"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <sstream>

namespace octorun::metrics {
namespace {

std::string scrape(const state_collector& c) {
  prometheus::TextSerializer ser;
  std::ostringstream os;
  ser.Serialize(os, c.Collect());
  return os.str();
}

state_snapshot sample() {
  state_snapshot s;
  s.runners[{"ci", "linux-abc"}] = {"ci", "linux-abc", "linux", "", model::runner_phase::running, true, 17};
  s.runners[{"ci", "linux-def"}] = {"ci", "linux-def", "linux", "", model::runner_phase::unset, false, 0};
  runnerset_record set{"ci", "linux", 4, {}};
  set.variants.push_back({"", 3, 1, 10, 1, 1, 1, 0, 2});
  set.variants.push_back({"gpu", 0, 0, 2, 0, 0, 0, 0, 0});
  s.runnersets[{"ci", "linux"}] = set;
  return s;
}

bool has_line(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(StateMetrics, ExposesFamiliesBeforeAnyObjectExists) {
  state_collector c;
  auto text = scrape(c);
  EXPECT_NE(text.find("# TYPE octorun_runner_status_phase gauge"), std::string::npos);
  EXPECT_NE(text.find("# TYPE octorun_runnerset_runners gauge"), std::string::npos);
}

TEST(StateMetrics, OneSeriesPerDeclaredPhaseWithTheCurrentOneSet) {
  state_collector c;
  c.publish(std::make_shared<state_snapshot>(sample()));
  auto text = scrape(c);
  const std::string l = R"(namespace="ci",runner="linux-abc",runnerset="linux",variant="")";
  EXPECT_TRUE(has_line(text, "octorun_runner_status_phase{" + l + R"(,phase="Running"} 1)")) << text;
  EXPECT_TRUE(has_line(text, "octorun_runner_status_phase{" + l + R"(,phase="Pending"} 0)")) << text;
  EXPECT_TRUE(has_line(text, "octorun_runner_info{" + l + R"(,github_runner_id="17"} 1)")) << text;
  // A runner whose phase is not yet published has no phase series at all.
  EXPECT_EQ(text.find(R"(octorun_runner_status_phase{namespace="ci",runner="linux-def")"), std::string::npos);
}

TEST(StateMetrics, CountsPerVariantAndTheReplicasPerSet) {
  state_collector c;
  c.publish(std::make_shared<state_snapshot>(sample()));
  auto text = scrape(c);
  const std::string d = R"(namespace="ci",runnerset="linux",variant="")";
  EXPECT_TRUE(has_line(text, "octorun_runnerset_desired_runners{" + d + "} 3")) << text;
  EXPECT_TRUE(has_line(text, "octorun_runnerset_runners{" + d + R"(,state="idle"} 1)")) << text;
  EXPECT_TRUE(has_line(text, "octorun_runnerset_assigned_jobs{" + d + "} 2")) << text;
  EXPECT_TRUE(has_line(text, "octorun_runnerset_queued_jobs{" + d + "} 1")) << text;  // 2 assigned, 1 running
  EXPECT_TRUE(has_line(text, R"(octorun_runnerset_spec_replicas{namespace="ci",runnerset="linux"} 4)"))
      << text;
  EXPECT_EQ(text.find("busy_ratio"), std::string::npos) << "a derived value: PromQL's";
}

// The exposition text of every family, pinned: names, HELP, TYPE, labels
// and their order are what dashboards, alerts and the adapter rules read.
TEST(StateMetrics, ExpositionTextOfEveryFamily) {
  state_collector c;
  c.publish(std::make_shared<state_snapshot>(sample()));
  EXPECT_EQ(scrape(c),
            R"(# HELP octorun_runner_info Information about a Runner: its set, variant and GitHub runner id.
# TYPE octorun_runner_info gauge
octorun_runner_info{namespace="ci",runner="linux-abc",runnerset="linux",variant="",github_runner_id="17"} 1
octorun_runner_info{namespace="ci",runner="linux-def",runnerset="linux",variant="",github_runner_id=""} 1
# HELP octorun_runner_status_phase The Runner's phase. Pending: not assigned a job (starting or idle); Running: a job has been assigned; Succeeded, Failed, Outdated: finished.
# TYPE octorun_runner_status_phase gauge
octorun_runner_status_phase{namespace="ci",runner="linux-abc",runnerset="linux",variant="",phase="Pending"} 0
octorun_runner_status_phase{namespace="ci",runner="linux-abc",runnerset="linux",variant="",phase="Running"} 1
octorun_runner_status_phase{namespace="ci",runner="linux-abc",runnerset="linux",variant="",phase="Succeeded"} 0
octorun_runner_status_phase{namespace="ci",runner="linux-abc",runnerset="linux",variant="",phase="Failed"} 0
octorun_runner_status_phase{namespace="ci",runner="linux-abc",runnerset="linux",variant="",phase="Outdated"} 0
# HELP octorun_runner_status_ready Whether the Runner's pod is ready (the runner is online).
# TYPE octorun_runner_status_ready gauge
octorun_runner_status_ready{namespace="ci",runner="linux-abc",runnerset="linux",variant=""} 1
octorun_runner_status_ready{namespace="ci",runner="linux-def",runnerset="linux",variant=""} 0
# HELP octorun_runnerset_desired_runners Runners the RunnerSet variant wants now.
# TYPE octorun_runnerset_desired_runners gauge
octorun_runnerset_desired_runners{namespace="ci",runnerset="linux",variant=""} 3
octorun_runnerset_desired_runners{namespace="ci",runnerset="linux",variant="gpu"} 0
# HELP octorun_runnerset_spec_min_runners The variant's minRunners: idle runners kept on top of demand.
# TYPE octorun_runnerset_spec_min_runners gauge
octorun_runnerset_spec_min_runners{namespace="ci",runnerset="linux",variant=""} 1
octorun_runnerset_spec_min_runners{namespace="ci",runnerset="linux",variant="gpu"} 0
# HELP octorun_runnerset_spec_max_runners The variant's maxRunners.
# TYPE octorun_runnerset_spec_max_runners gauge
octorun_runnerset_spec_max_runners{namespace="ci",runnerset="linux",variant=""} 10
octorun_runnerset_spec_max_runners{namespace="ci",runnerset="linux",variant="gpu"} 2
# HELP octorun_runnerset_assigned_jobs Jobs assigned to the variant and not yet completed.
# TYPE octorun_runnerset_assigned_jobs gauge
octorun_runnerset_assigned_jobs{namespace="ci",runnerset="linux",variant=""} 2
octorun_runnerset_assigned_jobs{namespace="ci",runnerset="linux",variant="gpu"} 0
# HELP octorun_runnerset_queued_jobs Jobs assigned to the variant that no runner has started yet: assigned jobs less running runners (status assignedJobs - runningRunners, at least 0).
# TYPE octorun_runnerset_queued_jobs gauge
octorun_runnerset_queued_jobs{namespace="ci",runnerset="linux",variant=""} 1
octorun_runnerset_queued_jobs{namespace="ci",runnerset="linux",variant="gpu"} 0
# HELP octorun_runnerset_runners Runners of the variant by state, as the RunnerSet's status counts them: starting (no job, pod not ready: status pendingRunners), idle (online, no job), running (a job is assigned), failed.
# TYPE octorun_runnerset_runners gauge
octorun_runnerset_runners{namespace="ci",runnerset="linux",variant="",state="starting"} 1
octorun_runnerset_runners{namespace="ci",runnerset="linux",variant="",state="idle"} 1
octorun_runnerset_runners{namespace="ci",runnerset="linux",variant="",state="running"} 1
octorun_runnerset_runners{namespace="ci",runnerset="linux",variant="",state="failed"} 0
octorun_runnerset_runners{namespace="ci",runnerset="linux",variant="gpu",state="starting"} 0
octorun_runnerset_runners{namespace="ci",runnerset="linux",variant="gpu",state="idle"} 0
octorun_runnerset_runners{namespace="ci",runnerset="linux",variant="gpu",state="running"} 0
octorun_runnerset_runners{namespace="ci",runnerset="linux",variant="gpu",state="failed"} 0
# HELP octorun_runnerset_spec_replicas The RunnerSet's spec.replicas: the floor under job demand that kubectl scale or a HorizontalPodAutoscaler writes (0: none).
# TYPE octorun_runnerset_spec_replicas gauge
octorun_runnerset_spec_replicas{namespace="ci",runnerset="linux"} 4
)");
}

TEST(StateMetrics, DeletedObjectsDisappearWithTheNextSnapshot) {
  state_collector c;
  c.publish(std::make_shared<state_snapshot>(sample()));
  c.publish(std::make_shared<state_snapshot>());
  EXPECT_EQ(scrape(c).find("linux-abc"), std::string::npos);
}

}  // namespace
}  // namespace octorun::metrics
