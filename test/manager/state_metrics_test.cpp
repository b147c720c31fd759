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
  s.runners[{"ci", "linux-abc"}] = {"ci", "linux-abc", "linux", "", runner::phase::running, true, 17};
  s.runners[{"ci", "linux-def"}] = {"ci", "linux-def", "linux", "", runner::phase::unset, false, 0};
  runnerset_record set{"ci", "linux", {}};
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

TEST(StateMetrics, CountsPerVariantAndASafeBusyRatio) {
  state_collector c;
  c.publish(std::make_shared<state_snapshot>(sample()));
  auto text = scrape(c);
  const std::string d = R"(namespace="ci",runnerset="linux",variant="")";
  const std::string gpu = R"(namespace="ci",runnerset="linux",variant="gpu")";
  EXPECT_TRUE(has_line(text, "octorun_runnerset_desired_runners{" + d + "} 3")) << text;
  EXPECT_TRUE(has_line(text, "octorun_runnerset_runners{" + d + R"(,state="idle"} 1)")) << text;
  EXPECT_TRUE(has_line(text, "octorun_runnerset_assigned_jobs{" + d + "} 2")) << text;
  EXPECT_TRUE(has_line(text, "octorun_runnerset_busy_ratio{" + gpu + "} 0")) << text;
}

TEST(StateMetrics, DeletedObjectsDisappearWithTheNextSnapshot) {
  state_collector c;
  c.publish(std::make_shared<state_snapshot>(sample()));
  c.publish(std::make_shared<state_snapshot>());
  EXPECT_EQ(scrape(c).find("linux-abc"), std::string::npos);
}

}  // namespace
}  // namespace octorun::metrics
