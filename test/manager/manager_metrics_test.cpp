// The manager's own metrics (actors/metrics/manager_metrics.hpp): each
// family's exposition text is pinned (names, HELP, TYPE, labels and their
// order are what the dashboard, the alerts and users' queries read), and the
// per-RunnerSet rate-limit series live exactly as long as some client of the
// set's credentials does.
#include "actors/metrics/manager_metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <sstream>
#include <vector>

namespace octorun::metrics {
namespace {

using namespace std::chrono_literals;

// The recorder's wall clock in the tests that measure against it.
constexpr std::int64_t fixed_now = 1'800'000'000;

// The lines of one family in a scrape: its HELP and TYPE, then its samples
// (for a histogram, NAME_bucket/_sum/_count) sorted, since the client
// library keeps a family's series in a hash map.
std::string family_text(const std::string& scrape, const std::string& name) {
  std::istringstream in(scrape);
  std::string out;
  std::vector<std::string> samples;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("# HELP " + name + " ") || line.starts_with("# TYPE " + name + " "))
      out += line + "\n";
    for (const char* suffix : {"", "_bucket", "_sum", "_count"}) {
      const auto n = name + suffix;
      if (line.starts_with(n + "{") || line.starts_with(n + " ")) {
        samples.push_back(line + "\n");
        break;
      }
    }
  }
  std::sort(samples.begin(), samples.end());
  for (const auto& s : samples) out += s;
  return out;
}

std::shared_ptr<manager_metrics> make() { return manager_metrics::make({"replica-0", "1.2.3", "abc1234"}); }

TEST(ManagerMetrics, IdentityAndLeadership) {
  auto m = make();
  m->set_leader(true);
  const auto text = m->scrape();
  EXPECT_EQ(family_text(text, "octorun_manager_leader"),
            "# HELP octorun_manager_leader 1 while this replica holds the Lease and reconciles, else 0.\n"
            "# TYPE octorun_manager_leader gauge\n"
            "octorun_manager_leader{identity=\"replica-0\"} 1\n");
  EXPECT_EQ(family_text(text, "octorun_manager_info"),
            "# HELP octorun_manager_info The manager's version; 1.\n"
            "# TYPE octorun_manager_info gauge\n"
            "octorun_manager_info{commit=\"abc1234\",identity=\"replica-0\",version=\"1.2.3\"} 1\n");
  EXPECT_NE(family_text(text, "octorun_manager_start_time_seconds")
                .find("# TYPE octorun_manager_start_time_seconds gauge\noctorun_manager_start_time_seconds "),
            std::string::npos)
      << text;
}

TEST(ManagerMetrics, KubernetesRequestsByVerbResourceAndCode) {
  auto m = make();
  m->observe({"patch", "runnersets.octorun.io/status"}, 200, 30ms);
  m->observe({"patch", "runnersets.octorun.io/status"}, 409, 2ms);
  m->observe({"watch", "pods"}, 200, 300s);  // counted, not timed
  m->observe({"get", "secrets"}, 0, 30s);
  const auto text = m->scrape();
  EXPECT_EQ(
      family_text(text, "octorun_kube_requests_total"),
      "# HELP octorun_kube_requests_total HTTP requests to the Kubernetes API server by verb, resource and "
      "status code (code \"error\": no response).\n"
      "# TYPE octorun_kube_requests_total counter\n"
      "octorun_kube_requests_total{code=\"200\",resource=\"pods\",verb=\"watch\"} 1\n"
      "octorun_kube_requests_total{code=\"200\",resource=\"runnersets.octorun.io/status\",verb=\"patch\"} 1\n"
      "octorun_kube_requests_total{code=\"409\",resource=\"runnersets.octorun.io/status\",verb=\"patch\"} 1\n"
      "octorun_kube_requests_total{code=\"error\",resource=\"secrets\",verb=\"get\"} 1\n");
  const auto hist = family_text(text, "octorun_kube_request_duration_seconds");
  EXPECT_EQ(hist.find("verb=\"watch\""), std::string::npos) << hist;
  EXPECT_NE(hist.find("# TYPE octorun_kube_request_duration_seconds histogram\n"), std::string::npos);
  EXPECT_NE(hist.find("octorun_kube_request_duration_seconds_count{resource=\"runnersets.octorun.io/status\","
                      "verb=\"patch\"} 2\n"),
            std::string::npos)
      << hist;
  EXPECT_NE(
      hist.find("octorun_kube_request_duration_seconds_bucket{resource=\"runnersets.octorun.io/status\","
                "verb=\"patch\",le=\"0.005\"} 1\n"),
      std::string::npos)
      << hist;
  EXPECT_NE(
      hist.find("octorun_kube_request_duration_seconds_bucket{resource=\"runnersets.octorun.io/status\","
                "verb=\"patch\",le=\"0.05\"} 2\n"),
      std::string::npos)
      << hist;
  EXPECT_NE(
      hist.find(
          "octorun_kube_request_duration_seconds_bucket{resource=\"secrets\",verb=\"get\",le=\"+Inf\"} 1\n"),
      std::string::npos)
      << hist;
}

TEST(ManagerMetrics, GithubRequestsAndTheRateLimitOfEachSetsCredentials) {
  auto m = make();
  auto linux = m->github_observer("ci", "linux");
  github::rate_limit_info rate;
  rate.present = true;
  rate.limit = 5000;
  rate.remaining = 4321;
  rate.reset_epoch = 1767225600;
  rate.resource = "core";
  linux->observe("POST /orgs/{org}/actions/runners/generate-jitconfig", 201, rate);
  linux->observe("GET /orgs/{org}/actions/runners", 0, {});
  const auto text = m->scrape();
  EXPECT_EQ(
      family_text(text, "octorun_github_requests_total"),
      "# HELP octorun_github_requests_total HTTP requests to GitHub (REST and the Actions service) by "
      "endpoint and status class (2xx ... 5xx; error: no response).\n"
      "# TYPE octorun_github_requests_total counter\n"
      "octorun_github_requests_total{endpoint=\"GET /orgs/{org}/actions/runners\",status_class=\"error\"} 1\n"
      "octorun_github_requests_total{endpoint=\"POST /orgs/{org}/actions/runners/generate-jitconfig\","
      "status_class=\"2xx\"} 1\n");
  EXPECT_EQ(
      family_text(text, "octorun_github_rate_limit_remaining"),
      "# HELP octorun_github_rate_limit_remaining Requests left in the current window for the RunnerSet's "
      "credentials (x-ratelimit-remaining of the last answer).\n"
      "# TYPE octorun_github_rate_limit_remaining gauge\n"
      "octorun_github_rate_limit_remaining{namespace=\"ci\",resource=\"core\",runnerset=\"linux\"} 4321\n");
  EXPECT_EQ(
      family_text(text, "octorun_github_rate_limit_limit"),
      "# HELP octorun_github_rate_limit_limit The request budget GitHub grants the RunnerSet's credentials "
      "per window (x-ratelimit-limit), by rate-limit resource.\n"
      "# TYPE octorun_github_rate_limit_limit gauge\n"
      "octorun_github_rate_limit_limit{namespace=\"ci\",resource=\"core\",runnerset=\"linux\"} 5000\n");
  EXPECT_EQ(
      family_text(text, "octorun_github_rate_limit_reset_timestamp_seconds"),
      "# HELP octorun_github_rate_limit_reset_timestamp_seconds When the RunnerSet's credentials' rate-limit "
      "window resets (x-ratelimit-reset), in seconds since the epoch.\n"
      "# TYPE octorun_github_rate_limit_reset_timestamp_seconds gauge\n"
      "octorun_github_rate_limit_reset_timestamp_seconds{namespace=\"ci\",resource=\"core\","
      "runnerset=\"linux\"} 1767225600\n");
}

TEST(ManagerMetrics, ASetsRateLimitSeriesGoWithTheLastClientOfItsCredentials) {
  auto m = make();
  github::rate_limit_info rate;
  rate.present = true;
  rate.limit = 5000;
  rate.remaining = 10;
  auto old_pool = m->github_observer("ci", "linux");
  auto new_pool = m->github_observer("ci", "linux");  // a restarted set actor's, before the old one is gone
  old_pool->observe("GET /x", 200, rate);
  const std::string series =
      "octorun_github_rate_limit_remaining{namespace=\"ci\",resource=\"core\",runnerset=\"linux\"}";
  old_pool.reset();
  EXPECT_NE(m->scrape().find(series + " 10\n"), std::string::npos);
  rate.remaining = 9;
  new_pool->observe("GET /x", 200, rate);
  EXPECT_NE(m->scrape().find(series + " 9\n"), std::string::npos);
  new_pool.reset();
  EXPECT_EQ(m->scrape().find(series), std::string::npos) << "the set's credentials are not used any more";
  // A resource name GitHub would not send does not become a label value.
  auto odd = m->github_observer("ci", "odd");
  rate.resource = "Not a resource!";
  odd->observe("GET /x", 200, rate);
  EXPECT_NE(m->scrape().find("octorun_github_rate_limit_remaining{namespace=\"ci\",resource=\"other\","
                             "runnerset=\"odd\"} 9\n"),
            std::string::npos)
      << m->scrape();
  // An answer without rate-limit headers (GHES without limits) sets nothing.
  auto ghes = m->github_observer("ci", "ghes");
  ghes->observe("GET /x", 200, {});
  EXPECT_EQ(m->scrape().find("runnerset=\"ghes\""), std::string::npos);
}

TEST(ManagerMetrics, WebhookDeliveriesByOutcome) {
  auto m = make();
  m->webhook_deliveries()->accepted += 3;
  m->webhook_deliveries()->duplicates += 1;
  m->webhook_deliveries()->bad_signature += 2;
  const auto text = m->scrape();
  EXPECT_EQ(
      family_text(text, "octorun_webhook_deliveries_total"),
      "# HELP octorun_webhook_deliveries_total GitHub webhook deliveries by outcome: accepted (a "
      "workflow_job handed to the controller), duplicate (a delivery id seen before), replayed (a job's "
      "action seen before under another delivery id, or a queued job older than a job waits), "
      "bad_signature, malformed, ignored (another event or action), ping.\n"
      "# TYPE octorun_webhook_deliveries_total counter\n"
      "octorun_webhook_deliveries_total{outcome=\"accepted\"} 3\n"
      "octorun_webhook_deliveries_total{outcome=\"bad_signature\"} 2\n"
      "octorun_webhook_deliveries_total{outcome=\"duplicate\"} 1\n"
      "octorun_webhook_deliveries_total{outcome=\"ignored\"} 0\n"
      "octorun_webhook_deliveries_total{outcome=\"malformed\"} 0\n"
      "octorun_webhook_deliveries_total{outcome=\"ping\"} 0\n"
      "octorun_webhook_deliveries_total{outcome=\"replayed\"} 0\n");
}

TEST(ManagerMetrics, WhatTheActorsReport) {
  auto m = make();
  m->runner_created("ci", "linux", "");
  m->runner_created("ci", "linux", "");
  m->runner_deleted("ci", "linux", "", deletion_reason::finished);
  m->runner_deleted("ci", "linux", "large", deletion_reason::scaled_down);
  m->runner_deleted("ci", "linux", "old", deletion_reason::drained);
  m->runner_deleted("ci", "linux", "gpu", deletion_reason::stuck_start);
  m->stuck_start_replaced("ci", "linux", "gpu");
  m->reconcile_error("runnerset", "publish_status");
  m->listener_session("ci", "linux", "large", true);
  m->listener_session("ci", "linux", "small", true);
  m->listener_session("ci", "linux", "small", false);
  m->listener_failed("ci", "linux", "small");
  m->listener_session("ci", "linux", "retired", true);
  m->listener_stopped("ci", "linux", "retired");
  const auto text = m->scrape();
  EXPECT_EQ(family_text(text, "octorun_runners_created_total"),
            "# HELP octorun_runners_created_total Runners the manager created, by RunnerSet and variant.\n"
            "# TYPE octorun_runners_created_total counter\n"
            "octorun_runners_created_total{namespace=\"ci\",runnerset=\"linux\",variant=\"\"} 2\n");
  EXPECT_EQ(
      family_text(text, "octorun_runners_deleted_total"),
      "# HELP octorun_runners_deleted_total Runners the manager deleted, by RunnerSet, variant and reason: "
      "finished (a terminal phase), scaled_down (idle and not wanted), drained (its variant removed, or "
      "its RunnerSet deleted) or stuck_start (not online by its start-up deadline).\n"
      "# TYPE octorun_runners_deleted_total counter\n"
      "octorun_runners_deleted_total{namespace=\"ci\",reason=\"drained\",runnerset=\"linux\",variant=\"old\"}"
      " 1\n"
      "octorun_runners_deleted_total{namespace=\"ci\",reason=\"finished\",runnerset=\"linux\",variant=\"\"} "
      "1\n"
      "octorun_runners_deleted_total{namespace=\"ci\",reason=\"scaled_down\",runnerset=\"linux\","
      "variant=\"large\"} 1\n"
      "octorun_runners_deleted_total{namespace=\"ci\",reason=\"stuck_start\",runnerset=\"linux\","
      "variant=\"gpu\"} 1\n");
  EXPECT_EQ(
      family_text(text, "octorun_stuck_starts_replaced_total"),
      "# HELP octorun_stuck_starts_replaced_total Runners that did not come online by their variant's "
      "start-up deadline (spec.startupTimeoutSeconds, or derived from observed start-ups), by RunnerSet "
      "and variant: each is removed unless it took a job, and replaced within maxRunners.\n"
      "# TYPE octorun_stuck_starts_replaced_total counter\n"
      "octorun_stuck_starts_replaced_total{namespace=\"ci\",runnerset=\"linux\",variant=\"gpu\"} 1\n");
  EXPECT_EQ(
      family_text(text, "octorun_reconcile_errors_total"),
      "# HELP octorun_reconcile_errors_total Requests made for a controller's actions that failed (an API "
      "error or a timeout), by controller and action; the action is retried on a later reconcile.\n"
      "# TYPE octorun_reconcile_errors_total counter\n"
      "octorun_reconcile_errors_total{action=\"publish_status\",controller=\"runnerset\"} 1\n");
  EXPECT_EQ(
      family_text(text, "octorun_listener_session_open"),
      "# HELP octorun_listener_session_open 1 while the variant's scale-set listener holds an open message "
      "session (Listener intake), else 0.\n"
      "# TYPE octorun_listener_session_open gauge\n"
      "octorun_listener_session_open{namespace=\"ci\",runnerset=\"linux\",variant=\"large\"} 1\n"
      "octorun_listener_session_open{namespace=\"ci\",runnerset=\"linux\",variant=\"small\"} 0\n");
  EXPECT_EQ(
      family_text(text, "octorun_listener_session_failures_total"),
      "# HELP octorun_listener_session_failures_total Scale-set listener incarnations that ended with an "
      "error; each is restarted with capped backoff.\n"
      "# TYPE octorun_listener_session_failures_total counter\n"
      "octorun_listener_session_failures_total{namespace=\"ci\",runnerset=\"linux\",variant=\"small\"} 1\n");
}

TEST(ManagerMetrics, JobsStartedAndCompletedWithTheirQueueAndRunTimes) {
  auto m = make();
  messages::job_info job;
  // An hour ago: times older than a week are not believed (model/timeline.hpp).
  const std::int64_t t = std::time(nullptr) - 3600;
  job.queued_at = t;
  job.started_at = t + 12;  // 12 s in the queue
  m->job_started("ci", "linux", "", job);
  job.completed_at = t + 12 + 400;  // 400 s of work
  m->job_completed("ci", "linux", "", "success", job);
  messages::job_info unknown;  // a message without times: counted, not timed
  m->job_started("ci", "linux", "large", unknown);
  m->job_completed("ci", "linux", "large", "Something New", unknown);
  m->job_completed("ci", "linux", "large", "", unknown);
  const auto text = m->scrape();
  EXPECT_EQ(family_text(text, "octorun_jobs_started_total"),
            "# HELP octorun_jobs_started_total Jobs that started on the RunnerSet's runners, by variant.\n"
            "# TYPE octorun_jobs_started_total counter\n"
            "octorun_jobs_started_total{namespace=\"ci\",runnerset=\"linux\",variant=\"\"} 1\n"
            "octorun_jobs_started_total{namespace=\"ci\",runnerset=\"linux\",variant=\"large\"} 1\n");
  EXPECT_EQ(
      family_text(text, "octorun_jobs_completed_total"),
      "# HELP octorun_jobs_completed_total Jobs that ended on the RunnerSet's runners, by variant and result "
      "(GitHub's conclusion: success, failure, cancelled, ...; other, unknown).\n"
      "# TYPE octorun_jobs_completed_total counter\n"
      "octorun_jobs_completed_total{namespace=\"ci\",result=\"other\",runnerset=\"linux\",variant=\"large\"} "
      "1\n"
      "octorun_jobs_completed_total{namespace=\"ci\",result=\"success\",runnerset=\"linux\",variant=\"\"} 1\n"
      "octorun_jobs_completed_total{namespace=\"ci\",result=\"unknown\",runnerset=\"linux\",variant="
      "\"large\"} 1\n");
  const auto queue = family_text(text, "octorun_job_queue_duration_seconds");
  EXPECT_NE(queue.find("# TYPE octorun_job_queue_duration_seconds histogram\n"), std::string::npos) << queue;
  EXPECT_NE(queue.find("octorun_job_queue_duration_seconds_bucket{namespace=\"ci\",runnerset=\"linux\","
                       "variant=\"\",le=\"10\"} 0\n"),
            std::string::npos)
      << queue;
  EXPECT_NE(queue.find("octorun_job_queue_duration_seconds_bucket{namespace=\"ci\",runnerset=\"linux\","
                       "variant=\"\",le=\"20\"} 1\n"),
            std::string::npos)
      << queue;
  EXPECT_NE(queue.find("octorun_job_queue_duration_seconds_sum{namespace=\"ci\",runnerset=\"linux\","
                       "variant=\"\"} 12\n"),
            std::string::npos)
      << queue;
  EXPECT_EQ(queue.find("variant=\"large\""), std::string::npos) << "no times, no observation";
  const auto run = family_text(text, "octorun_job_run_duration_seconds");
  EXPECT_NE(run.find("octorun_job_run_duration_seconds_bucket{namespace=\"ci\",runnerset=\"linux\","
                     "variant=\"\",le=\"300\"} 0\n"),
            std::string::npos)
      << run;
  EXPECT_NE(run.find("octorun_job_run_duration_seconds_bucket{namespace=\"ci\",runnerset=\"linux\","
                     "variant=\"\",le=\"600\"} 1\n"),
            std::string::npos)
      << run;
}

// One line of the Prometheus text format is in `text`.
bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// The value of the series `series` (name and labels) in `text`; -1 when absent.
double sample_value(const std::string& text, const std::string& series) {
  const auto at = ("\n" + text).find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 1));
}

TEST(ManagerMetrics, JobPhasesTheStartTargetAndTimestampProblems) {
  metrics_options options;
  options.job_start_target_seconds = 300;
  options.now = [] { return fixed_now; };
  auto m = manager_metrics::make({"replica-0", "1.2.3", "abc1234"}, options);
  const std::int64_t t = fixed_now - 3600;
  messages::job_info quick;
  quick.queued_at = t;
  quick.started_at = t + 30;
  m->job_started("ci", "linux", "", quick);
  messages::job_info late;  // 400 s in the queue: past the target
  late.queued_at = t;
  late.started_at = t + 400;
  m->job_started("ci", "linux", "", late);
  late.completed_at = t + 300;  // completed before it started
  m->job_completed("ci", "linux", "", "success", late);
  messages::job_info skewed;  // GitHub's clock a day ahead
  skewed.queued_at = t;
  skewed.started_at = fixed_now + 86400;
  m->job_started("ci", "linux", "", skewed);
  messages::job_info untimed;  // no times at all
  m->job_started("ci", "linux", "", untimed);

  const auto text = m->scrape();
  const auto phases = family_text(text, "octorun_job_phase_seconds");
  EXPECT_NE(phases.find("# HELP octorun_job_phase_seconds Time of each phase of a job's way through the "
                        "system, by variant and phase"),
            std::string::npos)
      << phases;
  EXPECT_NE(phases.find("# TYPE octorun_job_phase_seconds histogram\n"), std::string::npos) << phases;
  const std::string started = R"(namespace="ci",phase="job_started",runnerset="linux",variant="")";
  EXPECT_TRUE(has_line(phases, "octorun_job_phase_seconds_count{" + started + "} 2")) << phases;
  EXPECT_TRUE(has_line(phases, "octorun_job_phase_seconds_sum{" + started + "} 430")) << phases;
  EXPECT_TRUE(has_line(phases, "octorun_job_phase_seconds_bucket{" + started + ",le=\"300\"} 1")) << phases;
  EXPECT_EQ(phases.find("phase=\"job_completed\""), std::string::npos) << "a reordered phase is no sample";
  EXPECT_EQ(
      family_text(text, "octorun_jobs_start_target_exceeded_total"),
      "# HELP octorun_jobs_start_target_exceeded_total Jobs that waited longer than the start target "
      "from GitHub queueing them to a runner of the set starting them, by variant.\n"
      "# TYPE octorun_jobs_start_target_exceeded_total counter\n"
      "octorun_jobs_start_target_exceeded_total{namespace=\"ci\",runnerset=\"linux\",variant=\"\"} 1\n");
  const std::string problem = "octorun_job_phase_timestamp_problems_total{namespace=\"ci\",phase=\"";
  const auto problems = family_text(text, "octorun_job_phase_timestamp_problems_total");
  EXPECT_TRUE(
      has_line(problems, problem + R"(job_completed",reason="reordered",runnerset="linux",variant=""} 1)"))
      << problems;
  EXPECT_TRUE(has_line(problems, problem + R"(job_started",reason="future",runnerset="linux",variant=""} 1)"))
      << problems;
  EXPECT_TRUE(
      has_line(problems, problem + R"(job_started",reason="missing",runnerset="linux",variant=""} 1)"))
      << problems;
  // Every start counts, timed or not.
  EXPECT_TRUE(has_line(text, R"(octorun_jobs_started_total{namespace="ci",runnerset="linux",variant=""} 4)"));
}

TEST(ManagerMetrics, ARunnersEndGivesItsPhasesAndItsCostByStateAndBoundedRepository) {
  metrics_options options;
  options.repositories_per_set = 2;
  options.now = [] { return fixed_now; };
  auto m = manager_metrics::make({"replica-0", "1.2.3", "abc1234"}, options);
  const std::int64_t t = fixed_now - 3600;
  auto end_of = [&](std::string repository) {
    runner_end end;
    end.timeline.queued = t;
    end.timeline.created = t + 1;
    end.timeline.pod_scheduled = t + 2;
    end.timeline.containers_started = t + 12;
    end.timeline.online = t + 20;
    end.timeline.started = t + 22;
    end.timeline.completed = t + 122;  // 100 s busy, 20 + 3 s idle
    end.timeline.gone = t + 125;
    end.repository = std::move(repository);
    end.requests = {0.5, 1024.0 * 1024 * 1024};
    return end;
  };
  m->runner_gone("ci", "linux", "", end_of("acme/app"));
  m->runner_gone("ci", "linux", "", end_of("acme/lib"));
  m->runner_gone("ci", "linux", "", end_of("acme/third"));  // past the bound: other
  m->runner_gone("ci", "linux", "", end_of("acme/app"));
  m->runner_gone("ci", "linux", "", end_of("not a \"repository\"\n"));
  const auto text = m->scrape();
  const std::string set = R"(namespace="ci",)";
  for (const auto& [repo, count] : std::vector<std::pair<std::string, int>>{
           {"acme/app", 2}, {"acme/lib", 1}, {"other", 1}, {"invalid", 1}}) {
    const std::string labels =
        set + "repository=\"" + repo + R"(",runnerset="linux",state="busy",variant="")";
    EXPECT_TRUE(has_line(text, "octorun_runner_seconds_total{" + labels + "} " + std::to_string(100 * count)))
        << repo << "\n"
        << family_text(text, "octorun_runner_seconds_total");
    EXPECT_TRUE(has_line(
        text, "octorun_runner_cpu_request_core_seconds_total{" + labels + "} " + std::to_string(50 * count)))
        << repo;
    EXPECT_DOUBLE_EQ(sample_value(text, "octorun_runner_memory_request_byte_seconds_total{" + labels + "}"),
                     100.0 * count * 1024 * 1024 * 1024)
        << repo;
  }
  const std::string idle = set + R"(repository="",runnerset="linux",state="idle",variant="")";
  EXPECT_TRUE(has_line(text, "octorun_runner_seconds_total{" + idle + "} 115"))
      << family_text(text, "octorun_runner_seconds_total");
  const auto phases = family_text(text, "octorun_job_phase_seconds");
  for (const auto& [phase, seconds] : std::vector<std::pair<std::string, int>>{{"runner_created", 1},
                                                                               {"pod_scheduled", 1},
                                                                               {"containers_started", 10},
                                                                               {"runner_online", 8},
                                                                               {"runner_gone", 3}})
    EXPECT_TRUE(has_line(phases, "octorun_job_phase_seconds_sum{namespace=\"ci\",phase=\"" + phase +
                                     R"(",runnerset="linux",variant=""} )" + std::to_string(5 * seconds)))
        << phase << "\n"
        << phases;
  // An end with no time of its own ends at the recorder's now: its pod
  // scheduled 3,598 s before it, 100 s of them busy.
  auto unended = end_of("acme/app");
  unended.timeline.gone.reset();
  m->runner_gone("ci", "unended", "", unended);
  EXPECT_TRUE(has_line(
      m->scrape(),
      R"(octorun_runner_seconds_total{namespace="ci",repository="",runnerset="unended",state="idle",variant=""} )"
      "3498"))
      << family_text(m->scrape(), "octorun_runner_seconds_total");
}

TEST(ManagerMetrics, ResultLabelsAreBounded) {
  EXPECT_EQ(result_label("success"), "success");
  EXPECT_EQ(result_label("Succeeded"), "succeeded");
  EXPECT_EQ(result_label("timed_out"), "timed_out");
  EXPECT_EQ(result_label("{\"weird\":1}"), "other");
  EXPECT_EQ(result_label(""), "unknown");
}

TEST(ManagerMetrics, EveryFamilyIsThereBeforeAnyEvent) {
  const auto text = make()->scrape();
  for (const char* family : {"octorun_kube_requests_total",
                             "octorun_kube_request_duration_seconds",
                             "octorun_github_requests_total",
                             "octorun_github_rate_limit_limit",
                             "octorun_github_rate_limit_remaining",
                             "octorun_github_rate_limit_reset_timestamp_seconds",
                             "octorun_webhook_deliveries_total",
                             "octorun_runners_created_total",
                             "octorun_runners_deleted_total",
                             "octorun_reconcile_errors_total",
                             "octorun_listener_session_open",
                             "octorun_listener_session_failures_total",
                             "octorun_jobs_started_total",
                             "octorun_jobs_completed_total",
                             "octorun_job_queue_duration_seconds",
                             "octorun_job_run_duration_seconds",
                             "octorun_job_phase_seconds",
                             "octorun_job_phase_timestamp_problems_total",
                             "octorun_jobs_start_target_exceeded_total",
                             "octorun_runner_seconds_total",
                             "octorun_runner_cpu_request_core_seconds_total",
                             "octorun_runner_memory_request_byte_seconds_total",
                             "octorun_runnerset_queued_jobs",
                             "octorun_runnerset_runners",
                             "octorun_runner_status_phase",
                             "octorun_rejected_input_total",
                             "octorun_github_rate_limited",
                             "octorun_github_rate_limit_pauses_total",
                             "octorun_github_deferred_removals",
                             "octorun_kube_events_dropped_total"})
    EXPECT_NE(text.find(std::string("# TYPE ") + family + " "), std::string::npos) << family;
}

}  // namespace
}  // namespace octorun::metrics
