// Where a job's time and money went (bench/loadtest/breakdown.hpp): phases
// from synthetic timestamps, with steps missing or out of order, and the idle
// node-seconds of nodes shared by busy runners.
#include "bench/loadtest/breakdown.hpp"

#include <gtest/gtest.h>

#include "bench/loadtest/report.hpp"

namespace octorun::loadtest {
namespace {

// Unix ms of a run that starts at 1,000 s.
constexpr double t0 = 1'000'000;

std::optional<double> of(const job_phases& p, phase which) { return p[static_cast<std::size_t>(which)]; }

bench::sim_job_record job(double queued, double started) {
  bench::sim_job_record j;
  j.id = 1;
  j.runner_name = "r1";
  j.queued_ms = queued;
  j.started_ms = started;
  return j;
}

// A pod that waited 60 s for a new node, then pulled cold.
pod_marks cold_pod() {
  pod_marks p;
  p.created = t0 + 100;
  p.scheduled = t0 + 61'100;
  p.sandbox_ready = t0 + 62'600;
  p.images_pulled = t0 + 82'600;
  p.running = t0 + 83'600;
  p.node = "n1";
  return p;
}

TEST(LoadtestBreakdown, EveryPhaseOfAJobThatWaitedForANewNode) {
  node_marks node{t0 + 60'000, t0 + 60'500, 0};
  const auto pod = cold_pod();
  auto p = phases_of(job(t0, t0 + 87'700), &pod, &node, t0 + 87'600);
  EXPECT_DOUBLE_EQ(*of(p, phase::manager), 0.1);
  EXPECT_DOUBLE_EQ(*of(p, phase::scheduling), 61);
  EXPECT_DOUBLE_EQ(*of(p, phase::node_provisioning), 60.4);  // pod created -> node Ready
  EXPECT_DOUBLE_EQ(*of(p, phase::sandbox), 1.5);
  EXPECT_DOUBLE_EQ(*of(p, phase::image_pull), 20);
  EXPECT_DOUBLE_EQ(*of(p, phase::container_start), 1);
  EXPECT_DOUBLE_EQ(*of(p, phase::runner_start), 4);
  EXPECT_DOUBLE_EQ(*of(p, phase::assignment), 0.1);
  // The phases but node provisioning (inside scheduling) add up to the wait.
  double sum = 0;
  for (std::size_t i = 0; i < phase_count; ++i)
    if (static_cast<phase>(i) != phase::node_provisioning) sum += *p[i];
  EXPECT_NEAR(sum, 87.7, 1e-9);
}

TEST(LoadtestBreakdown, ANodeThatExistedAlreadyCostsNoProvisioning) {
  node_marks node{t0 - 5'000, t0 - 4'000, 0};
  const auto pod = cold_pod();
  auto p = phases_of(job(t0, t0 + 87'700), &pod, &node, t0 + 87'600);
  EXPECT_EQ(of(p, phase::node_provisioning), 0.0);
}

TEST(LoadtestBreakdown, StepsNotSeenAreUnmeasuredNeverZero) {
  // kwok's fast stages: the pod runs with no sandbox or pull condition.
  pod_marks fast;
  fast.created = t0 + 10;
  fast.scheduled = t0 + 20;
  fast.running = t0 + 30;
  fast.node = "gone";
  auto p = phases_of(job(t0, t0 + 50), &fast, nullptr, t0 + 40);
  EXPECT_DOUBLE_EQ(*of(p, phase::scheduling), 0.01);
  EXPECT_FALSE(of(p, phase::node_provisioning));  // its node was not watched
  EXPECT_FALSE(of(p, phase::sandbox));
  EXPECT_FALSE(of(p, phase::image_pull));
  EXPECT_FALSE(of(p, phase::container_start));
  EXPECT_DOUBLE_EQ(*of(p, phase::runner_start), 0.01);

  // A job no runner took, whose pod was never seen.
  auto waiting = phases_of(job(t0, 0), nullptr, nullptr, 0);
  for (const auto& v : waiting) EXPECT_FALSE(v);

  // A node seen but never Ready after the pod appeared.
  node_marks not_ready{t0 + 60'000, 0, 0};
  const auto pod = cold_pod();
  EXPECT_FALSE(of(phases_of(job(t0, 0), &pod, &not_ready, 0), phase::node_provisioning));
}

TEST(LoadtestBreakdown, OutOfOrderIsUnmeasuredButAStampsRoundingIsZero) {
  // The simulator stamps whole milliseconds: started 0.4 ms before the
  // watch's online mark is the same instant.
  const auto pod = cold_pod();
  auto p = phases_of(job(t0, t0 + 87'600), &pod, nullptr, t0 + 87'600.4);
  EXPECT_EQ(of(p, phase::assignment), 0.0);
  // A second out of order is a broken record, not a negative phase.
  auto q = phases_of(job(t0, t0 + 86'600), &pod, nullptr, t0 + 87'600);
  EXPECT_FALSE(of(q, phase::assignment));
}

TEST(LoadtestBreakdown, TheEarlierOfTwoWatchesSightingsCounts) {
  // The Runner watch saw the pod run (and brought the runner online) before
  // the pod watch saw its container running.
  pod_marks pod = cold_pod();
  bench::runner_times runner;
  runner.pod = t0 + 150;             // later than the pod watch: ignored
  runner.pod_running = t0 + 83'500;  // earlier: taken
  auto seen = earliest_sightings(pod, runner);
  EXPECT_EQ(seen.created, t0 + 100);
  EXPECT_EQ(seen.scheduled, t0 + 61'100);  // not seen by the Runner watch (0): kept
  EXPECT_EQ(seen.running, t0 + 83'500);
  EXPECT_EQ(seen.images_pulled, t0 + 82'600);
  auto p = phases_of(job(t0, t0 + 83'600), &seen, nullptr, t0 + 83'501);
  EXPECT_DOUBLE_EQ(*of(p, phase::runner_start), 0.001);
  // A pod only the Runner watch saw.
  EXPECT_EQ(earliest_sightings({}, runner).created, t0 + 150);
}

TEST(LoadtestBreakdown, PercentilesCountOnlyMeasuredJobs) {
  std::vector<job_phases> jobs(9);
  for (int i = 0; i < 9; ++i) jobs[i][static_cast<std::size_t>(phase::image_pull)] = i + 1.0;
  jobs.emplace_back();  // unmeasured: counted apart, not as 0
  auto s = phase_statistics(jobs);
  const auto& pull = s[static_cast<std::size_t>(phase::image_pull)];
  EXPECT_EQ(pull.measured, 9u);
  EXPECT_EQ(pull.unmeasured, 1u);
  EXPECT_DOUBLE_EQ(pull.p50, 5);
  EXPECT_DOUBLE_EQ(pull.p95, 9);
  EXPECT_DOUBLE_EQ(pull.p99, 9);
  const auto& manager = s[static_cast<std::size_t>(phase::manager)];
  EXPECT_EQ(manager.measured, 0u);
  EXPECT_EQ(manager.unmeasured, 10u);
}

TEST(LoadtestBreakdown, TheSummaryReportsEachPhaseAndWhatWasNotMeasured) {
  run_record r;
  r.start_ms = t0;
  auto j = job(t0, t0 + 87'700);
  j.completed_ms = t0 + 90'000;
  r.jobs = {j, job(t0, 0)};
  r.jobs[1].runner_name.clear();
  r.pods["r1"] = cold_pod();
  r.nodes["n1"] = {t0 + 60'000, t0 + 60'500, 0};
  r.runner_online_ms["r1"] = t0 + 87'600;
  options o;
  auto s = summarize(r, o);
  ASSERT_EQ(s.job_phases_s.size(), 2u);
  const auto& pull = s.phases[static_cast<std::size_t>(phase::image_pull)];
  EXPECT_EQ(pull.measured, 1u);
  EXPECT_EQ(pull.unmeasured, 1u);
  EXPECT_DOUBLE_EQ(pull.p95, 20);
  auto text = summary_text(r, o, s);
  EXPECT_NE(text.find("image_pull          p50 20.00 s, p95 20.00 s, p99 20.00 s (1 of 2 jobs not measured)"),
            std::string::npos)
      << text;
  auto json = summary_json(r, o, s);
  EXPECT_NE(json.find(R"("image_pull":{"measured":1,"unmeasured":1,"p50":20.000,"p95":20.000,"p99":20.000})"),
            std::string::npos)
      << json;
}

TEST(LoadtestIdleNodes, SecondsWithNoBusyRunnerOnEachNode) {
  std::map<std::string, node_marks> nodes = {
      {"old", {t0 - 50'000, t0 - 50'000, 0}},            // before the run: counted from its start
      {"new", {t0 + 10'000, t0 + 11'000, t0 + 70'000}},  // launched and consolidated within it
  };
  std::vector<busy_span> busy = {
      {"old", t0 + 5'000, t0 + 25'000},
      {"old", t0 + 15'000, t0 + 35'000},  // overlaps the first: two runners on one node
      {"new", t0 + 20'000, t0 + 40'000},
      {"elsewhere", t0, t0 + 100'000},  // a node not watched
  };
  // old: 100 s in the window, busy 5-35 s: 70 s idle. new: 10-70 s, busy 20 s: 40 s idle.
  EXPECT_DOUBLE_EQ(idle_node_seconds(nodes, busy, t0, t0 + 100'000), 110);
  EXPECT_DOUBLE_EQ(idle_node_seconds({}, busy, t0, t0 + 100'000), 0);
}

TEST(LoadtestIdleNodes, TheSummaryDividesByTheCompletedJobs) {
  run_record r;
  r.start_ms = t0;
  for (int i = 0; i < 2; ++i) {
    auto j = job(t0, t0 + 10'000);
    j.runner_name = "r" + std::to_string(i);
    j.completed_ms = t0 + 30'000;
    r.jobs.push_back(j);
    r.pods[j.runner_name].node = "n1";
    r.runners[j.runner_name].deleted = t0 + 40'000;  // the run ends at 40 s
  }
  r.nodes["n1"] = {t0 - 1'000, t0 - 1'000, 0};
  r.nodes["spare"] = {t0 + 20'000, t0 + 21'000, 0};
  options o;
  auto s = summarize(r, o);
  // n1: 40 s, busy 10-30 s: 20 s idle; spare: 20-40 s, never busy: 20 s.
  EXPECT_DOUBLE_EQ(s.idle_node_s, 40);
  EXPECT_DOUBLE_EQ(s.idle_node_s_per_job, 20);
  EXPECT_EQ(s.nodes_seen, 2u);
  EXPECT_FALSE(s.idle_runner_s_per_job);  // no --manager-metrics
  r.cost = run_cost{40, 12, 0, 0};
  EXPECT_DOUBLE_EQ(*summarize(r, o).idle_runner_s_per_job, 6);
}

bench::runner_counts counts(std::size_t starting, std::size_t idle, std::size_t busy, std::size_t ending) {
  bench::runner_counts c;
  c.starting = starting;
  c.idle = idle;
  c.busy = busy;
  c.finished = ending;
  c.total = starting + idle + busy + ending;
  return c;
}

// Each sample's counts hold until the next one, in the window the sample
// falls in; what comes after the last window counts in it.
TEST(LoadtestRunnerSeconds, EachStateHeldUntilTheNextSampleByWindow) {
  const std::vector<std::pair<double, bench::runner_counts>> samples = {
      {0, counts(2, 0, 0, 0)},    // two starting for 4 s
      {4, counts(0, 2, 0, 0)},    // both online, idle for 8 s (into the second window)
      {12, counts(0, 1, 1, 0)},   // one took a job, for 10 s
      {22, counts(0, 0, 0, 1)},   // the job done, its runner ending for 8 s
      {30, counts(0, 0, 0, 0)},   // gone: past the last window, counted in it
      {31, counts(0, 0, 0, 0)}};  // (the last sample holds for nothing)
  const auto w = runner_seconds_by_window(samples, 10, 2);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_DOUBLE_EQ(w[0].starting, 8);
  EXPECT_DOUBLE_EQ(w[0].idle, 16) << "the sample at 4 s counts its 8 s in the window it falls in";
  EXPECT_DOUBLE_EQ(w[1].idle, 10);
  EXPECT_DOUBLE_EQ(w[1].busy, 10);
  EXPECT_DOUBLE_EQ(w[1].ending, 8);
  EXPECT_TRUE(runner_seconds_by_window(samples, 10, 0).empty());
  EXPECT_DOUBLE_EQ(runner_seconds_by_window({}, 10, 1)[0].idle, 0);
}

}  // namespace
}  // namespace octorun::loadtest
