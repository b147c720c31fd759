// model/timeline.hpp: the phases of a job's way through the system over
// traces with missing, reordered, future and far-past timestamps, the
// runner-seconds of a Runner, and repository label values; model/quantity.hpp;
// what the pod and Runner decoders (model/parse.hpp) read of them.
#include "model/timeline.hpp"

#include <gtest/gtest.h>

#include "common/json_parse.hpp"
#include "common/rfc3339.hpp"
#include "model/children.hpp"
#include "model/parse.hpp"
#include "model/quantity.hpp"

namespace octorun::model {
namespace {

constexpr std::int64_t t0 = 1'780'000'000;  // a moment in 2026

// A cold start on a well-behaved cluster: queued, then everything in order.
job_timeline cold_start() {
  job_timeline t;
  t.queued = t0;
  t.created = t0 + 2;
  t.pod_scheduled = t0 + 3;
  t.containers_started = t0 + 13;
  t.online = t0 + 20;
  t.started = t0 + 25;
  t.completed = t0 + 85;
  t.gone = t0 + 87;
  return t;
}

constexpr std::initializer_list<job_phase> every_phase = {
    job_phase::runner_created, job_phase::pod_scheduled, job_phase::containers_started,
    job_phase::runner_online,  job_phase::job_started,   job_phase::job_completed,
    job_phase::runner_gone};

TEST(JobTimeline, EveryPhaseOfAnOrderlyColdStart) {
  const auto m = measure(cold_start(), every_phase, t0 + 90);
  EXPECT_TRUE(m.drops.empty());
  const std::vector<phase_sample> expected = {
      {job_phase::runner_created, 2}, {job_phase::pod_scheduled, 1}, {job_phase::containers_started, 10},
      {job_phase::runner_online, 7},  {job_phase::job_started, 25},  {job_phase::job_completed, 60},
      {job_phase::runner_gone, 2}};
  EXPECT_EQ(m.samples, expected);
}

TEST(JobTimeline, PhasesNotReachedAreLeftOutWithoutCounting) {
  job_timeline t;
  t.created = t0;
  t.pod_scheduled = t0 + 1;  // scaled down before its containers started
  t.gone = t0 + 30;
  const auto m = measure(t, every_phase, t0 + 30);
  EXPECT_EQ(m.samples, (std::vector<phase_sample>{{job_phase::pod_scheduled, 1}}));
  EXPECT_TRUE(m.drops.empty());
}

TEST(JobTimeline, AWarmRunnerHasNoRunnerCreatedPhase) {
  auto t = cold_start();
  t.queued = t0 + 60;  // the runner was online long before the job came
  t.started = t0 + 61;
  const auto m = measure(t, {job_phase::runner_created, job_phase::job_started}, t0 + 100);
  EXPECT_EQ(m.samples, (std::vector<phase_sample>{{job_phase::job_started, 1}}));
  EXPECT_TRUE(m.drops.empty());
}

TEST(JobTimeline, AMissingTimestampIsCountedNotMeasured) {
  auto t = cold_start();
  t.queued = 0;  // the message said nothing of when GitHub queued the job
  const auto m = measure(t, {job_phase::job_started, job_phase::job_completed}, t0 + 90);
  EXPECT_EQ(m.samples, (std::vector<phase_sample>{{job_phase::job_completed, 60}}));
  EXPECT_EQ(m.drops, (std::vector<phase_drop>{{job_phase::job_started, timestamp_problem::missing}}));
}

TEST(JobTimeline, ReorderedGitHubTimestampsAreDroppedNeverNegative) {
  auto t = cold_start();
  t.started = t0 + 100;
  t.completed = t0 + 99;  // completed a second before it started
  const auto m = measure(t, {job_phase::job_started, job_phase::job_completed}, t0 + 200);
  EXPECT_EQ(m.samples, (std::vector<phase_sample>{{job_phase::job_started, 100}}));
  EXPECT_EQ(m.drops, (std::vector<phase_drop>{{job_phase::job_completed, timestamp_problem::reordered}}));
}

TEST(JobTimeline, ReorderedClusterTimestampsAreDropped) {
  auto t = cold_start();
  t.containers_started = t0 + 1;  // before its pod was scheduled, on one clock: not skew
  const auto m = measure(t, {job_phase::containers_started}, t0 + 90);
  EXPECT_TRUE(m.samples.empty());
  EXPECT_EQ(m.drops,
            (std::vector<phase_drop>{{job_phase::containers_started, timestamp_problem::reordered}}));
}

TEST(JobTimeline, SmallSkewBetweenClocksIsZeroAndCounted) {
  auto t = cold_start();
  t.gone = *t.completed - 5;  // the cluster's clock runs behind GitHub's
  const auto m = measure(t, {job_phase::runner_gone}, t0 + 90);
  EXPECT_EQ(m.samples, (std::vector<phase_sample>{{job_phase::runner_gone, 0}}));
  EXPECT_EQ(m.drops, (std::vector<phase_drop>{{job_phase::runner_gone, timestamp_problem::skewed}}));
}

TEST(JobTimeline, LargeSkewBetweenClocksIsDropped) {
  auto t = cold_start();
  t.gone = *t.completed - 600;
  const auto m = measure(t, {job_phase::runner_gone}, t0 + 90);
  EXPECT_TRUE(m.samples.empty());
  EXPECT_EQ(m.drops, (std::vector<phase_drop>{{job_phase::runner_gone, timestamp_problem::reordered}}));
}

TEST(JobTimeline, AFutureTimestampIsDroppedBeyondTheToleranceAndClampedWithin) {
  auto t = cold_start();
  const std::int64_t now = t0 + 30;
  t.started = now + 3600;  // GitHub's clock an hour ahead
  auto m = measure(t, {job_phase::job_started}, now);
  EXPECT_TRUE(m.samples.empty());
  EXPECT_EQ(m.drops, (std::vector<phase_drop>{{job_phase::job_started, timestamp_problem::future}}));

  t.started = now + 10;  // within the tolerance: now
  m = measure(t, {job_phase::job_started}, now);
  EXPECT_EQ(m.samples, (std::vector<phase_sample>{{job_phase::job_started, 30}}));
  EXPECT_TRUE(m.drops.empty());
}

TEST(JobTimeline, AFarPastTimestampIsDroppedNotAnAbsurdDuration) {
  auto t = cold_start();
  t.queued = 1;  // the epoch, as a default value might say
  auto m = measure(t, {job_phase::job_started, job_phase::runner_created}, t0 + 90);
  EXPECT_TRUE(m.samples.empty());
  EXPECT_EQ(m.drops, (std::vector<phase_drop>{{job_phase::job_started, timestamp_problem::far_past},
                                              {job_phase::runner_created, timestamp_problem::far_past}}));

  t.queued = t0 - 8 * 24 * 3600;  // queued eight days before
  m = measure(t, {job_phase::job_started}, t0 + 90);
  EXPECT_EQ(m.drops, (std::vector<phase_drop>{{job_phase::job_started, timestamp_problem::far_past}}));
}

TEST(RunnerUsage, BusyFromTheJobsStartToItsEndIdleTheRest) {
  const auto u = usage_of(cold_start(), t0 + 87);
  EXPECT_EQ(u, (runner_usage{60, 24}));  // scheduled at +3, busy +25..+85, gone at +87
}

TEST(RunnerUsage, ARunnerWithoutAJobIsIdleFromItsScheduling) {
  job_timeline t;
  t.created = t0;
  t.pod_scheduled = t0 + 4;
  EXPECT_EQ(usage_of(t, t0 + 104), (runner_usage{0, 100}));
  t.pod_scheduled.reset();  // never scheduled: from its creation
  EXPECT_EQ(usage_of(t, t0 + 104), (runner_usage{0, 104}));
}

TEST(RunnerUsage, AJobWithoutItsEndIsBusyToTheRunnersEnd) {
  auto t = cold_start();
  t.completed.reset();
  EXPECT_EQ(usage_of(t, t0 + 87), (runner_usage{62, 22}));
}

TEST(RunnerUsage, UntrustedJobTimesLeaveTheRunnerIdleAndNothingNegative) {
  auto t = cold_start();
  t.started = t0 + 100'000;  // in the future
  EXPECT_EQ(usage_of(t, t0 + 87), (runner_usage{0, 84}));
  t = cold_start();
  t.started = t0 - 100;  // before the pod was scheduled (skew): busy from the scheduling
  EXPECT_EQ(usage_of(t, t0 + 87), (runner_usage{82, 2}));
  t = cold_start();
  t.completed = t0 + 10;  // before its start: no busy time
  EXPECT_EQ(usage_of(t, t0 + 87), (runner_usage{0, 84}));
  t = cold_start();
  t.pod_scheduled = t0 + 1'000;  // after its end
  t.created = t0 + 1'000;
  EXPECT_EQ(usage_of(t, t0 + 87), (runner_usage{}));
}

TEST(RepositoryLabel, KeepsGitHubNamesAndRefusesAnythingElse) {
  EXPECT_EQ(repository_label("acme/app"), "acme/app");
  EXPECT_EQ(repository_label("Acme-1/app.v2_x"), "Acme-1/app.v2_x");
  EXPECT_EQ(repository_label(""), "");
  EXPECT_EQ(repository_label("acme"), "invalid");
  EXPECT_EQ(repository_label("acme/app/extra"), "invalid");
  EXPECT_EQ(repository_label("acme/\"}\nx 1"), "invalid");
  EXPECT_EQ(repository_label(std::string(40, 'a') + "/app"), "invalid");
  EXPECT_EQ(repository_label("acme/" + std::string(101, 'a')), "invalid");
}

TEST(Quantity, ParsesWhatPodsRequest) {
  EXPECT_DOUBLE_EQ(*parse_quantity("500m"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_quantity("2"), 2);
  EXPECT_DOUBLE_EQ(*parse_quantity("1.5"), 1.5);
  EXPECT_DOUBLE_EQ(*parse_quantity("1Gi"), 1024.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parse_quantity("128Mi"), 128.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parse_quantity("1G"), 1e9);
  EXPECT_DOUBLE_EQ(*parse_quantity("1e3"), 1000);
  EXPECT_DOUBLE_EQ(*parse_quantity("1E"), 1e18);
  EXPECT_DOUBLE_EQ(*parse_quantity("250k"), 250'000);
  EXPECT_FALSE(parse_quantity(""));
  EXPECT_FALSE(parse_quantity("m"));
  EXPECT_FALSE(parse_quantity("1Xi"));
  EXPECT_FALSE(parse_quantity("-1"));
  EXPECT_FALSE(parse_quantity("1..5"));
  EXPECT_FALSE(parse_quantity("1e"));
}

// What the pod informer keeps of a runner pod's way up and its requests.
TEST(RunnerPodTimeline, ReadsTheConditionTimesTheRunnersStartAndTheScheduledRequests) {
  auto d = json::parse(R"({"metadata":{"name":"p","uid":"u"},
    "spec":{"containers":[{"name":"runner","resources":{"requests":{"cpu":"500m","memory":"1Gi"}}},
                          {"name":"other","resources":{"requests":{"cpu":"250m"}}}],
            "initContainers":[{"name":"dind","restartPolicy":"Always","resources":{"requests":{"cpu":"1"}}},
                              {"name":"setup","resources":{"requests":{"cpu":"100m","memory":"4Gi"}}}],
            "overhead":{"memory":"64Mi"}},
    "status":{"phase":"Running",
      "conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-06-01T10:00:02Z"},
                    {"type":"Ready","status":"True","lastTransitionTime":"2026-06-01T10:00:20Z"}],
      "containerStatuses":[{"name":"other","state":{"running":{"startedAt":"2026-06-01T10:00:09Z"}}},
                           {"name":"runner","state":{"running":{"startedAt":"2026-06-01T10:00:12Z"}}}]}})",
                       json::sources::kube_object);
  ASSERT_TRUE(d);
  const auto pod = read_runner_pod(*d);
  EXPECT_EQ(pod.scheduled_at, *parse_rfc3339("2026-06-01T10:00:02Z"));
  EXPECT_EQ(pod.runner_started_at, *parse_rfc3339("2026-06-01T10:00:12Z"));
  EXPECT_EQ(pod.ready_at, *parse_rfc3339("2026-06-01T10:00:20Z"));
  // Containers 0.75 cores + the native sidecar's 1, above the init container's
  // 0.1; memory: the init container's 4Gi is larger than 1Gi, plus the overhead.
  EXPECT_DOUBLE_EQ(pod.requests.cpu_cores, 1.75);
  EXPECT_DOUBLE_EQ(pod.requests.memory_bytes, 4.0 * (1 << 30) + 64.0 * (1 << 20));
}

TEST(RunnerPodTimeline, APodNotYetReadyHasNoReadyTimeAndBadTimesAreNoTimes) {
  auto d = json::parse(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"runner",
      "resources":{"requests":{"cpu":"lots"}}}]},
    "status":{"conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"yesterday"},
                            {"type":"Ready","status":"False","lastTransitionTime":"2026-06-01T10:00:20Z"}]}})",
                       json::sources::kube_object);
  ASSERT_TRUE(d);
  const auto pod = read_runner_pod(*d);
  EXPECT_EQ(pod.scheduled_at, 0);
  EXPECT_EQ(pod.ready_at, 0);
  EXPECT_FALSE(pod.ready);
  EXPECT_EQ(pod.requests, pod_requests{});
}

// status.timeline as the Runner actor writes it; a value that is not a time
// is a point reached without a time (counted as missing), never a Runner the
// manager cannot read.
TEST(RunnerStatusTimeline, IsReadWithPointsThatAreNotTimesKeptAsMissing) {
  const auto r = parse_runner(std::string_view(R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner",
    "metadata":{"name":"r","namespace":"ci"},
    "status":{"phase":"Running","timeline":{"queued":"2026-06-01T10:00:00Z","created":"2026-06-01T10:00:01Z",
      "online":"2026-06-01T10:00:20Z","started":"not a time","completed":17}}})"));
  ASSERT_TRUE(r);
  const auto& t = r->status.timeline;
  EXPECT_EQ(t.queued, parse_rfc3339("2026-06-01T10:00:00Z"));
  EXPECT_EQ(t.created, parse_rfc3339("2026-06-01T10:00:01Z"));
  EXPECT_EQ(t.online, parse_rfc3339("2026-06-01T10:00:20Z"));
  EXPECT_FALSE(t.pod_scheduled);
  EXPECT_EQ(t.started, 0);
  EXPECT_EQ(t.completed, 0);
}

}  // namespace
}  // namespace octorun::model
