// octorun-loadtest's pure parts: its command line, the job schedule of each
// profile, and the summary with its targets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "adapters/kube/request_trace.hpp"
#include "bench/common/lifecycle.hpp"
#include "bench/loadtest/cost.hpp"
#include "bench/loadtest/options.hpp"
#include "bench/loadtest/report.hpp"
#include "bench/loadtest/schedule.hpp"

namespace octorun::loadtest {
namespace {

using namespace std::chrono_literals;

expected<options, std::string> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "octorun-loadtest");
  return parse_options(static_cast<int>(args.size()), args.data());
}

TEST(LoadtestOptions, DefaultsAreABurstOfZeroSecondJobsThroughTheListener) {
  auto o = parse({});
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->intake, "Listener");
  EXPECT_EQ(o->load.shape, profile::kind::burst);
  EXPECT_EQ(o->load.jobs, 100);
  EXPECT_EQ(o->max_runners, 20);
  EXPECT_EQ(o->durations.shape, distribution::kind::fixed);
  EXPECT_EQ(o->durations.a, 0);
  EXPECT_FALSE(o->want.any());
  // No runner start-up and tiny requests: what the measurements in README.md's log had.
  EXPECT_EQ(o->runner_start.shape, distribution::kind::fixed);
  EXPECT_EQ(o->runner_start.a, 0);
  EXPECT_EQ(o->runner_cpu, "10m");
  EXPECT_EQ(o->runner_memory, "16Mi");
}

TEST(LoadtestOptions, ARealShapedRun) {
  auto o = parse({"--profile", "workday", "--jobs", "600", "--duration", "30m", "--runner-start",
                  "uniform:2s:5s", "--runner-cpu", "2", "--runner-memory=4Gi", "--warm-up-timeout", "15m"});
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->load.shape, profile::kind::workday);
  EXPECT_EQ(o->load.jobs, 600);
  EXPECT_EQ(o->runner_start.shape, distribution::kind::uniform);
  EXPECT_EQ(o->runner_start.b, 5000);
  EXPECT_EQ(o->runner_cpu, "2");
  EXPECT_EQ(o->runner_memory, "4Gi");
  EXPECT_EQ(o->warm_up_timeout, 15min);
  EXPECT_FALSE(o->per_node_image_cache) << "no --node-selector: a cluster of fake nodes";
  auto poisson_day = parse({"--profile", "workday-poisson", "--jobs", "300", "--duration", "30m"});
  ASSERT_TRUE(poisson_day) << poisson_day.error();
  EXPECT_EQ(poisson_day->load.shape, profile::kind::workday_poisson);
  auto karpenter = parse({"--node-selector", "karpenter.sh/nodepool=runners"});
  ASSERT_TRUE(karpenter) << karpenter.error();
  EXPECT_TRUE(karpenter->per_node_image_cache);
  auto all_cold = parse({"--node-selector", "karpenter.sh/nodepool=runners", "--image-cache", "off"});
  ASSERT_TRUE(all_cold) << all_cold.error();
  EXPECT_FALSE(all_cold->per_node_image_cache);
  EXPECT_FALSE(parse({"--image-cache", "shared"}));
  for (const char* q : {"500m", "1.5", "512Mi", "4Gi", "2k"}) EXPECT_TRUE(is_quantity(q)) << q;
  for (const char* q : {"", "m", "2 CPUs", "-1", "1.", "4GB", "1e3"}) EXPECT_FALSE(is_quantity(q)) << q;
}

TEST(LoadtestOptions, BothFlagFormsAndEveryTarget) {
  auto o =
      parse({"--profile=steady", "--rate", "5", "--duration=10m", "--job-duration", "lognormal:2s:0.5",
             "--max-queue-p99=2s", "--max-queue-p50", "500ms", "--max-gone-p99=1s", "--min-jobs-per-s=4.5",
             "--max-writes-per-job=8", "--max-github-calls-per-job=2", "--max-rss-mib=128",
             "--node-selector=type=kwok", "--toleration", "octorun.io/real-node:Exists"});
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->load.shape, profile::kind::steady);
  EXPECT_EQ(o->load.rate, 5);
  EXPECT_EQ(o->load.duration, 600s);
  EXPECT_EQ(o->durations.shape, distribution::kind::lognormal);
  EXPECT_EQ(o->durations.a, 2000);
  EXPECT_EQ(o->durations.b, 0.5);
  EXPECT_EQ(*o->want.max_queue_p99_s, 2);
  EXPECT_EQ(*o->want.max_queue_p50_s, 0.5);
  EXPECT_EQ(*o->want.max_gone_p99_s, 1);
  EXPECT_EQ(*o->want.min_jobs_per_s, 4.5);
  EXPECT_EQ(*o->want.max_writes_per_job, 8);
  EXPECT_EQ(*o->want.max_github_calls_per_job, 2);
  EXPECT_EQ(*o->want.max_rss_mib, 128);
  EXPECT_EQ(o->node_selector, std::vector<std::string>{"type=kwok"});
  EXPECT_EQ(o->tolerations, std::vector<std::string>{"octorun.io/real-node:Exists"});
}

TEST(LoadtestOptions, BadInputNamesTheFlag) {
  struct bad {
    std::vector<const char*> args;
    std::string says;
  };
  for (const auto& b : std::vector<bad>{
           {{"--jobs", "0"}, "--jobs 0: want an integer of at least 1"},
           {{"--max-runners=-3"}, "--max-runners -3"},
           {{"--profile", "spike"}, "--profile spike: want one of burst, steady, ramp"},
           {{"--job-duration", "normal:2s"}, "--job-duration normal:2s: want fixed:D"},
           {{"--job-duration", "uniform:5s:1s"}, "--job-duration uniform:5s:1s"},
           {{"--max-queue-p99", "fast"}, "--max-queue-p99 fast: want a duration"},
           {{"--rate", "0"}, "--rate 0: want a positive number"},
           {{"--intake", "Webhook"}, "--intake Webhook needs --webhook-url"},
           {{"--intake", "Carrier-Pigeon"}, "--intake Carrier-Pigeon: want one of Webhook, Listener"},
           {{"--min-runners", "5", "--max-runners", "2"}, "--min-runners must not exceed --max-runners"},
           {{"--node-selector", "kwok"}, "--node-selector kwok: want KEY=VALUE"},
           {{"--jobs"}, "--jobs needs a value"},
           {{"--frobnicate", "1"}, "unknown flag --frobnicate"},
           {{"jobs"}, "unexpected argument jobs"},
           {{"--no-plots=1"}, "--no-plots takes no value"},
           {{"--profile", "workday", "--duration", "31m"},
            "--duration: --profile workday compresses a working "
            "day into at most 30m"},
           {{"--profile", "workday-poisson", "--duration", "31m"},
            "--duration: --profile workday-poisson compresses a working day into at most 30m"},
           {{"--runner-start", "soon"}, "--runner-start soon: want fixed:D"},
           {{"--runner-cpu", "two"}, "--runner-cpu two: want a quantity such as 500m or 2"},
           {{"--runner-memory", "4GB"}, "--runner-memory 4GB: want a quantity such as 512Mi or 4Gi"},
           {{"--start-time-target", "0"}, "--start-time-target 0: want an integer of at least 1"},
           {{"--profile", "bursts", "--every", "0s"}, "--every must be more than 0 for --profile bursts"},
           {{"--profile", "poisson", "--duration", "0s"},
            "--duration must be more than 0 for --profile poisson"},
       }) {
    auto o = parse(b.args);
    ASSERT_FALSE(o) << b.says;
    EXPECT_NE(o.error().find(b.says), std::string::npos) << o.error();
  }
}

TEST(LoadtestOptions, TheStartTimeComparisonsTraces) {
  auto target =
      parse({"--profile", "poisson", "--rate", "0.2", "--duration", "20m", "--start-time-target", "5"});
  ASSERT_TRUE(target) << target.error();
  EXPECT_EQ(target->load.shape, profile::kind::poisson);
  EXPECT_EQ(target->start_time_target_s, 5);
  auto bursts = parse({"--profile", "bursts", "--jobs", "200", "--every", "8m", "--duration=24m"});
  ASSERT_TRUE(bursts) << bursts.error();
  EXPECT_EQ(bursts->load.shape, profile::kind::bursts);
  EXPECT_EQ(bursts->load.every, 8min);
  EXPECT_EQ(bursts->start_time_target_s, 0);  // none unless asked
}

TEST(LoadtestOptions, Durations) {
  EXPECT_EQ(*parse_duration("500ms"), 500ms);
  EXPECT_EQ(*parse_duration("1.5s"), 1500ms);
  EXPECT_EQ(*parse_duration("2"), 2000ms);
  EXPECT_EQ(*parse_duration("10m"), 600s);
  EXPECT_EQ(*parse_duration("1h"), 3600s);
  EXPECT_FALSE(parse_duration("-1s"));
  EXPECT_FALSE(parse_duration("soon"));
  EXPECT_FALSE(parse_duration(""));
}

TEST(LoadtestSchedule, ABurstQueuesEveryJobAtOnce) {
  profile p;
  p.jobs = 7;
  auto jobs = plan_jobs(p, *parse_distribution("fixed:3s"), 1);
  ASSERT_EQ(jobs.size(), 7u);
  for (const auto& j : jobs) {
    EXPECT_EQ(j.at_s, 0);
    EXPECT_EQ(j.duration_ms, 3000);
  }
}

TEST(LoadtestSchedule, ASteadyRateQueuesOneJobEveryOneOverRate) {
  profile p;
  p.shape = profile::kind::steady;
  p.rate = 5;
  p.duration = 600s;
  auto jobs = plan_jobs(p, *parse_distribution("fixed:0s"), 1);
  ASSERT_EQ(jobs.size(), 3000u);
  EXPECT_DOUBLE_EQ(jobs[1].at_s, 0.2);
  EXPECT_DOUBLE_EQ(jobs.back().at_s, 599.8);
}

TEST(LoadtestSchedule, APoissonRateQueuesItsMeanWithExponentialGapsFromTheSeed) {
  profile p;
  p.shape = profile::kind::poisson;
  p.rate = 2;
  p.duration = 2000s;
  auto jobs = plan_jobs(p, *parse_distribution("fixed:0s"), 5);
  EXPECT_NEAR(static_cast<double>(jobs.size()), 4000, 4 * std::sqrt(4000.0));  // within 4 sigma
  EXPECT_EQ(jobs.front().at_s, 0);
  EXPECT_LT(jobs.back().at_s, 2000);
  EXPECT_TRUE(std::is_sorted(jobs.begin(), jobs.end(), [](auto& a, auto& b) { return a.at_s < b.at_s; }));
  // Exponential gaps: their mean is 1/rate and about e^-1 of them exceed it.
  std::size_t longer = 0;
  for (std::size_t i = 1; i < jobs.size(); ++i) longer += jobs[i].at_s - jobs[i - 1].at_s > 0.5;
  EXPECT_NEAR(static_cast<double>(longer) / static_cast<double>(jobs.size() - 1), std::exp(-1.0), 0.03);
  auto again = plan_jobs(p, *parse_distribution("fixed:0s"), 5);
  ASSERT_EQ(again.size(), jobs.size());
  EXPECT_EQ(again[100].at_s, jobs[100].at_s);
  EXPECT_NE(plan_jobs(p, *parse_distribution("fixed:0s"), 6)[100].at_s, jobs[100].at_s);
}

TEST(LoadtestSchedule, BurstsQueueTheirJobsAtOnceEveryInterval) {
  profile p;
  p.shape = profile::kind::bursts;
  p.jobs = 200;
  p.every = 8min;
  p.duration = 24min;
  auto jobs = plan_jobs(p, *parse_distribution("fixed:0s"), 1);
  ASSERT_EQ(jobs.size(), 600u);  // at 0, 8 and 16 minutes
  EXPECT_EQ(jobs[0].at_s, 0);
  EXPECT_EQ(jobs[199].at_s, 0);
  EXPECT_EQ(jobs[200].at_s, 480);
  EXPECT_EQ(jobs[599].at_s, 960);
}

TEST(LoadtestSchedule, ARampQueuesTheIntegralOfItsRateAndSpeedsUp) {
  profile p;
  p.shape = profile::kind::ramp;
  p.rate_from = 1;
  p.rate_to = 9;
  p.duration = 20s;
  auto jobs = plan_jobs(p, *parse_distribution("fixed:0s"), 1);
  ASSERT_EQ(jobs.size(), 100u);  // (1 + 9) / 2 * 20
  EXPECT_TRUE(std::is_sorted(jobs.begin(), jobs.end(), [](auto& a, auto& b) { return a.at_s < b.at_s; }));
  EXPECT_LT(jobs.back().at_s, 20);
  double first_gap = jobs[1].at_s - jobs[0].at_s, last_gap = jobs[99].at_s - jobs[98].at_s;
  EXPECT_GT(first_gap, 4 * last_gap);  // about 1 s apart at first, about 1/9 s at the end
}

TEST(LoadtestSchedule, AWorkdayQueuesItsTotalWithAPeakHourTenTimesTheQuietest) {
  profile p;
  p.shape = profile::kind::workday;
  p.jobs = 6800;  // 100 per unit of the hourly weights (68 in all)
  p.duration = 30min;
  auto jobs = plan_jobs(p, *parse_distribution("fixed:0s"), 3);
  ASSERT_EQ(jobs.size(), 6800u);
  EXPECT_TRUE(std::is_sorted(jobs.begin(), jobs.end(), [](auto& a, auto& b) { return a.at_s < b.at_s; }));
  const auto& weights = workday_hourly_weights();
  ASSERT_EQ(weights.size(), 12u);
  std::vector<int> per_hour(12);  // a "hour" is 150 s of the compressed day
  for (const auto& j : jobs) {
    ASSERT_GE(j.at_s, 0);
    ASSERT_LT(j.at_s, 1800);
    ++per_hour[static_cast<std::size_t>(j.at_s / 150)];
  }
  for (std::size_t h = 0; h < 12; ++h) EXPECT_NEAR(per_hour[h], 100 * weights[h], 1) << "hour " << h;
  auto [quietest, busiest] = std::minmax_element(per_hour.begin(), per_hour.end());
  EXPECT_NEAR(static_cast<double>(*busiest) / *quietest, 10, 0.2);
  // Seeded: the same seed, the same day; another seed moves the jobs, not the shape.
  auto again = plan_jobs(p, *parse_distribution("fixed:0s"), 3);
  EXPECT_EQ(again[1234].at_s, jobs[1234].at_s);
  auto other = plan_jobs(p, *parse_distribution("fixed:0s"), 4);
  EXPECT_NE(other[1234].at_s, jobs[1234].at_s);
  EXPECT_EQ(other.size(), 6800u);
}

// A Poisson day: the hourly shape on average over seeds, not in each day;
// the total varies as a Poisson count does; the durations are the seed's.
TEST(LoadtestSchedule, APoissonWorkdayKeepsTheHourlyShapeOnAverage) {
  profile p;
  p.shape = profile::kind::workday_poisson;
  p.jobs = 300;
  p.duration = 30min;
  const auto& weights = workday_hourly_weights();
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  constexpr int seeds = 400;
  std::vector<double> per_hour(12);
  double sum = 0, sum_sq = 0;
  bool some_day_differs_from_the_stratified_one = false;
  for (int seed = 1; seed <= seeds; ++seed) {
    auto jobs = plan_jobs(p, *parse_distribution("fixed:0s"), static_cast<std::uint64_t>(seed));
    ASSERT_TRUE(std::is_sorted(jobs.begin(), jobs.end(), [](auto& a, auto& b) { return a.at_s < b.at_s; }));
    std::vector<int> day(12);
    for (const auto& j : jobs) {
      ASSERT_GE(j.at_s, 0);
      ASSERT_LT(j.at_s, 1800);
      ++day[static_cast<std::size_t>(j.at_s / 150)];
    }
    for (std::size_t h = 0; h < 12; ++h) {
      per_hour[h] += day[h];
      if (std::abs(day[h] - 300 * weights[h] / total) > 3) some_day_differs_from_the_stratified_one = true;
    }
    const auto n = static_cast<double>(jobs.size());
    sum += n;
    sum_sq += n * n;
  }
  for (std::size_t h = 0; h < 12; ++h) {
    const double expected = 300 * weights[h] / total;  // per day; the mean over seeds is within 4 sigma
    EXPECT_NEAR(per_hour[h] / seeds, expected, 4 * std::sqrt(expected / seeds)) << "hour " << h;
  }
  const double mean = sum / seeds, variance = sum_sq / seeds - mean * mean;
  EXPECT_NEAR(mean, 300, 4 * std::sqrt(300.0 / seeds));
  EXPECT_NEAR(variance, 300, 0.3 * 300) << "a Poisson count's variance is its mean";
  EXPECT_TRUE(some_day_differs_from_the_stratified_one);
  // Seeded: the same seed, the same day; another seed another day. The
  // durations are those of the seed's other profiles.
  const auto d = *parse_distribution("lognormal:1m:0.6");
  auto a = plan_jobs(p, d, 2), again = plan_jobs(p, d, 2), other = plan_jobs(p, d, 3);
  ASSERT_EQ(a.size(), again.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].at_s, again[i].at_s);
    EXPECT_EQ(a[i].duration_ms, again[i].duration_ms);
  }
  EXPECT_NE(a[10].at_s, other[10].at_s);
  profile stratified = p;
  stratified.shape = profile::kind::workday;
  auto s = plan_jobs(stratified, d, 2);
  for (std::size_t i = 0; i < std::min(a.size(), s.size()); ++i)
    ASSERT_EQ(a[i].duration_ms, s[i].duration_ms);
}

TEST(LoadtestSchedule, DurationsComeFromTheDistributionAndTheSeed) {
  profile p;
  p.jobs = 2000;
  auto uniform = plan_jobs(p, *parse_distribution("uniform:1s:3s"), 7);
  EXPECT_TRUE(std::all_of(uniform.begin(), uniform.end(),
                          [](auto& j) { return j.duration_ms >= 1000 && j.duration_ms <= 3000; }));
  auto again = plan_jobs(p, *parse_distribution("uniform:1s:3s"), 7);
  auto other = plan_jobs(p, *parse_distribution("uniform:1s:3s"), 8);
  auto same = [](auto& a, auto& b) {
    return std::equal(a.begin(), a.end(), b.begin(),
                      [](auto& x, auto& y) { return x.duration_ms == y.duration_ms; });
  };
  EXPECT_TRUE(same(uniform, again));
  EXPECT_FALSE(same(uniform, other));
  auto exponential = plan_jobs(p, *parse_distribution("exponential:2s"), 1);
  double mean = std::accumulate(exponential.begin(), exponential.end(), 0.0,
                                [](double s, auto& j) { return s + j.duration_ms; }) /
                exponential.size();
  EXPECT_NEAR(mean, 2000, 200);
  auto lognormal = plan_jobs(p, *parse_distribution("lognormal:2s:0.5"), 1);
  std::vector<double> d;
  for (auto& j : lognormal) d.push_back(j.duration_ms);
  std::sort(d.begin(), d.end());
  EXPECT_NEAR(d[d.size() / 2], 2000, 150);  // the median
}

// A run of 3 jobs: queue times 1, 2 and 4 s; completed -> gone 0.5 s each.
run_record three_jobs() {
  run_record r;
  r.start_ms = 1'000'000;
  r.planned = 3;
  for (int i = 0; i < 3; ++i) {
    bench::sim_job_record j;
    j.id = i + 1;
    j.runner_name = "r" + std::to_string(i);
    j.queued_ms = r.start_ms;
    j.started_ms = r.start_ms + 1000.0 * (i == 2 ? 4 : i + 1);
    j.completed_ms = j.started_ms + 1000;
    r.jobs.push_back(j);
    bench::runner_times t;
    t.deleted = j.completed_ms + 500;
    r.runners[j.runner_name] = t;
  }
  r.max_active_runners = 2;
  r.github_calls = {{"rest.generate_jitconfig", 3}, {"rest.delete_runner", 3}, {"webhook.workflow_job", 9}};
  return r;
}

// The load test's maxRunners check counts what the manager bounds: a Runner
// being deleted still holds its slot until it is gone (new runners made
// while it goes are the breach the check is there to catch); one that ended
// holds none.
TEST(LoadtestBound, ARunnerHoldsASlotUntilItEndsBeingDeletedOrNot) {
  for (const char* phase : {"", "Pending", "Running"}) {
    EXPECT_TRUE(bench::holds_a_slot(phase, false)) << phase;
    EXPECT_TRUE(bench::holds_a_slot(phase, true)) << phase << ", being deleted";
  }
  for (const char* phase : {"Succeeded", "Failed", "Outdated"}) {
    EXPECT_FALSE(bench::holds_a_slot(phase, false)) << phase;
    EXPECT_FALSE(bench::holds_a_slot(phase, true)) << phase;
  }
}

TEST(LoadtestSummary, FiguresFromTheRecords) {
  options o;
  auto s = summarize(three_jobs(), o);
  EXPECT_EQ(s.completed, 3);
  EXPECT_DOUBLE_EQ(s.queue_p50, 2);
  EXPECT_DOUBLE_EQ(s.queue_p99, 4);
  EXPECT_DOUBLE_EQ(s.gone_p99, 0.5);
  EXPECT_DOUBLE_EQ(s.seconds, 5.5);  // first queued -> the last Runner gone
  EXPECT_NEAR(s.jobs_per_s, 3 / 5.5, 1e-9);
  EXPECT_DOUBLE_EQ(s.github_calls_per_job, 2);  // webhook deliveries are not calls
  EXPECT_DOUBLE_EQ(s.jit_per_job, 1);
  EXPECT_FALSE(s.writes_per_job);
  EXPECT_TRUE(s.passed());
}

// GitHub's calls are named by their API: the REST API's and the Actions
// service's scale-set protocol (a Listener set's sessions, polls, acquires).
TEST(LoadtestSummary, GitHubCallsByTheirAPI) {
  options o;
  auto r = three_jobs();
  r.github_calls["scaleset.get_message"] = 6;
  auto s = summarize(r, o);
  EXPECT_DOUBLE_EQ(s.github_calls_per_job, 4);
  EXPECT_DOUBLE_EQ(s.rest_calls_per_job, 2);
  EXPECT_DOUBLE_EQ(s.scale_set_calls_per_job, 2);
  auto text = summary_text(r, o, s);
  EXPECT_NE(text.find("4.00 calls per job: 2.00 REST calls, 2.00 scale-set protocol calls"),
            std::string::npos)
      << text;
  EXPECT_NE(summary_json(r, o, s).find("\"scaleSetCallsPerJob\":2.000"), std::string::npos);
}

TEST(LoadtestSummary, TargetsMetMissedAndNotMeasured) {
  options o;
  o.want.max_queue_p99_s = 5;
  o.want.max_queue_p50_s = 1.5;
  o.want.min_jobs_per_s = 0.5;
  o.want.max_writes_per_job = 8;  // no --manager-user: not measured, so not met
  auto s = summarize(three_jobs(), o);
  ASSERT_EQ(s.targets.size(), 4u);
  auto target = [&](const std::string& name) {
    return *std::find_if(s.targets.begin(), s.targets.end(), [&](auto& t) { return t.name == name; });
  };
  EXPECT_TRUE(target("queue time p99").met);
  EXPECT_FALSE(target("queue time p50").met);
  EXPECT_EQ(target("queue time p50").value, "2.00 s");
  EXPECT_TRUE(target("jobs/s").met);
  EXPECT_FALSE(target("Kubernetes writes per job").met);
  EXPECT_EQ(target("Kubernetes writes per job").value, "not measured");
  EXPECT_FALSE(s.passed());
  auto text = summary_text(three_jobs(), o, s);
  EXPECT_NE(text.find("queue time p50 <= 1.50 s: 2.00 s  MISSED"), std::string::npos) << text;
  EXPECT_NE(text.find("FAILED: 2 target(s) missed"), std::string::npos) << text;
  EXPECT_NE(summary_json(three_jobs(), o, s).find("\"passed\":false"), std::string::npos);
}

TEST(LoadtestSummary, ATimedOutRunFails) {
  options o;
  auto r = three_jobs();
  r.timed_out = true;
  EXPECT_FALSE(summarize(r, o).passed());
}

TEST(LoadtestSummary, ASteadyRunReportsQueueTimeByWindow) {
  options o;
  o.load.shape = profile::kind::steady;
  o.load.duration = 100s;
  auto r = three_jobs();
  r.jobs[2].queued_ms = r.start_ms + 95'000;
  r.jobs[2].started_ms = r.jobs[2].queued_ms + 4000;
  auto s = summarize(r, o);
  ASSERT_EQ(s.windows.size(), 10u);
  EXPECT_EQ(s.windows[0].jobs, 2u);
  EXPECT_EQ(s.windows[9].jobs, 1u);
  EXPECT_DOUBLE_EQ(s.windows[9].p99, 4);
}

TEST(RequestTrace, KindsNameTheResourceAndSubresource) {
  using kube::request_trace::kind_of;
  EXPECT_EQ(kind_of("/apis/octorun.io/v1alpha1/namespaces/ci/runners/r-1/status?fieldManager=x"),
            "runners/status");
  EXPECT_EQ(kind_of("/apis/octorun.io/v1alpha1/namespaces/ci/runners"), "runners");
  EXPECT_EQ(kind_of("/api/v1/namespaces/ci/pods/p"), "pods");
  EXPECT_EQ(kind_of("/api/v1/namespaces/ci"), "namespaces");
  EXPECT_EQ(kind_of("/apis/coordination.k8s.io/v1/namespaces/ci/leases/octorun"), "leases");
  EXPECT_EQ(kind_of("/version"), "/version");
  using kube::request_trace::name_of;
  EXPECT_EQ(name_of("/apis/octorun.io/v1alpha1/namespaces/ci/runners/r-1/status?fieldManager=x"), "r-1");
  EXPECT_EQ(name_of("/api/v1/namespaces/ci/pods/p"), "p");
  EXPECT_EQ(name_of("/api/v1/namespaces/ci/pods?watch=1"), "-");
  EXPECT_EQ(name_of("/api/v1/namespaces/ci"), "ci");
  EXPECT_EQ(name_of("/version"), "-");
}

// The run's cost is its own RunnerSet's series of the manager's cost
// counters, the difference across the run.
TEST(LoadtestCost, SumsTheRunsSetsSeriesByState) {
  const std::string before =
      "# TYPE octorun_runner_seconds_total counter\n"
      "octorun_runner_seconds_total{namespace=\"lt\",repository=\"acme/"
      "app\",runnerset=\"loadtest-x\",state=\"busy\","
      "variant=\"\"} 10\n";
  const std::string after =
      "# TYPE octorun_runner_seconds_total counter\n"
      "octorun_runner_seconds_total{namespace=\"lt\",repository=\"acme/"
      "app\",runnerset=\"loadtest-x\",state=\"busy\","
      "variant=\"\"} 70\n"
      "octorun_runner_seconds_total{namespace=\"lt\",repository=\"acme/"
      "lib\",runnerset=\"loadtest-x\",state=\"busy\","
      "variant=\"\"} 5\n"
      "octorun_runner_seconds_total{namespace=\"lt\",repository=\"\",runnerset=\"loadtest-x\",state=\"idle\","
      "variant=\"\"} 25\n"
      "octorun_runner_seconds_total{namespace=\"other\",repository=\"\",runnerset=\"loadtest-x\",state="
      "\"idle\","
      "variant=\"\"} 1000\n"
      "octorun_runner_cpu_request_core_seconds_total{namespace=\"lt\",repository=\"\",runnerset=\"loadtest-"
      "x\","
      "state=\"idle\",variant=\"\"} 12.5\n"
      "octorun_runner_memory_request_byte_seconds_total{namespace=\"lt\",repository=\"\",runnerset="
      "\"loadtest-x\","
      "state=\"idle\",variant=\"\"} 1.073741824e+09\n";
  const auto cost = minus(cost_in(after, "lt", "loadtest-x"), cost_in(before, "lt", "loadtest-x"));
  EXPECT_EQ(cost, (run_cost{65, 25, 12.5, 1073741824.0}));
  EXPECT_EQ(cost_in("", "lt", "loadtest-x"), run_cost{});
}

}  // namespace
}  // namespace octorun::loadtest
