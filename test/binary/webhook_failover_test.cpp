// Webhook deliveries are never lost (docs/intakes.md): the real manager
// binary, two replicas on one Lease behind a Service (a round-robin relay
// over the replicas' webhook intakes, as kube-proxy spreads connections over
// a Service's ready endpoints), the GitHub simulator and a real control
// plane. A burst of 100 jobs with the leader killed (-9) in the middle, and
// the only manager down for 30 s while jobs are queued: every job runs,
// none twice, nothing is left (Runners, Pods, JIT Secrets, GitHub runners).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "adapters/http/http_client.hpp"
#include "adapters/http/http_server.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/binary/replicas_test_base.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wiring.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

// The manager's Lease (cmd/octorun/main.cpp) and the election's retry period.
constexpr auto lease_duration = 15s;
constexpr auto retry_period = 2s;

class WebhookFailover : public test::replicas_test_base {
 protected:
  WebhookFailover() : replicas_test_base("mgrd", {}) {
    auto server = http::server::start(
        {}, {{"/webhook", {"POST"}, http::request_body::accepted, [this](const http::server_request& r) {
                return on_delivery(r);
              }}});
    if (!server) ADD_FAILURE() << server.error();
    service_ = std::move(*server);
    sim_->set_webhook(service_->base_url() + "/webhook", secret_);
  }

  ~WebhookFailover() override { service_.reset(); }

  // A replica; the sweep runs every 10 s here (the default is 60 s).
  test::octorun_process& start_replica(const std::string& identity) {
    return start_manager(identity, {"--webhook-sweep-seconds=10"});
  }

  // The Service's endpoints: the intakes of the replicas that are ready.
  void set_endpoints(std::vector<std::string> intakes) {
    std::lock_guard l(mu_);
    endpoints_ = std::move(intakes);
  }

  // Forwards a delivery to the next endpoint, as a Service would; GitHub
  // gets the replica's answer (502: none reached).
  http::server_response on_delivery(const http::server_request& r) {
    std::string target;
    {
      std::lock_guard l(mu_);
      if (!endpoints_.empty()) target = endpoints_[next_++ % endpoints_.size()];
    }
    if (target.empty()) return {503, "text/plain", "no endpoints", {}};
    http::client client;
    client.set_plain_http(true);
    std::vector<std::pair<std::string, std::string>> headers;
    for (const char* h : {"content-type", "x-github-event", "x-github-delivery", "x-hub-signature-256"})
      headers.emplace_back(h, std::string(r.header_value(h)));
    auto answer = client.perform({"POST", target, headers, r.body, 10s});
    std::lock_guard l(mu_);
    if (!answer) return {502, "text/plain", "endpoint unreachable", {}};
    ++answered_[target][answer->status];
    return {static_cast<int>(answer->status), "text/plain", answer->body, {}};
  }

  std::int64_t answered(const std::string& intake, long status) {
    std::lock_guard l(mu_);
    return answered_[intake][status];
  }

  std::vector<std::int64_t> queue(int n) { return test::queue_jobs(*sim_, n, 300ms); }

  std::size_t completed(const std::vector<std::int64_t>& ids) {
    return static_cast<std::size_t>(
        std::count_if(ids.begin(), ids.end(), [&](auto id) { return sim_->job_state(id) == "completed"; }));
  }

  // Each job completed once, on a runner of its own: the runner of every
  // job, from the simulator's state (a JIT runner runs one job).
  void expect_each_ran_once(const std::vector<std::int64_t>& ids) {
    rapidjson::Document state;
    auto text = sim_->state_json();
    state.Parse(text.data(), text.size());
    ASSERT_TRUE(state.IsObject() && state.HasMember("jobs"));
    std::set<std::int64_t> wanted(ids.begin(), ids.end());
    std::map<std::string, int> jobs_of_runner;
    std::size_t seen = 0;
    for (const auto& j : state["jobs"].GetArray()) {
      if (!wanted.contains(j["id"].GetInt64())) continue;
      ++seen;
      EXPECT_STREQ(j["state"].GetString(), "completed") << "job " << j["id"].GetInt64();
      ++jobs_of_runner[j["runner_name"].GetString()];
    }
    EXPECT_EQ(seen, ids.size());
    for (const auto& [runner, n] : jobs_of_runner) EXPECT_EQ(n, 1) << runner << " ran " << n << " jobs";
    EXPECT_EQ(jobs_of_runner.size(), ids.size());
  }

  std::unique_ptr<http::server> service_;
  std::mutex mu_;
  std::vector<std::string> endpoints_;
  std::size_t next_ = 0;
  std::map<std::string, std::map<long, std::int64_t>> answered_;
};

TEST_F(WebhookFailover, ABurstOf100JobsRunsOnceEachWhenTheLeaderIsKilledMidway) {
  auto& first = start_replica("replica-0");
  ASSERT_FALSE(first.wait_leading(60s).empty()) << log_tails();
  auto& second = start_replica("replica-1");
  const auto first_intake = first.wait_intake(10s), second_intake = second.wait_intake(60s);
  ASSERT_FALSE(first_intake.empty() || second_intake.empty()) << log_tails();
  // Both replicas are ready and both take deliveries.
  http::client probe;
  probe.set_plain_http(true);
  auto ready = probe.perform({"GET", second.wait_health(10s) + "/readyz", {}, ""});
  ASSERT_TRUE(ready && ready->status == 200);
  set_endpoints({first_intake, second_intake});
  test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", 0, 20);

  const auto started = std::chrono::steady_clock::now();
  auto ids = queue(100);
  // Bad input amid the burst: a job no variant takes (runs-on gpu).
  const auto unmatched = test::queue_jobs(*sim_, 1, 300ms, "gpu").front();
  ASSERT_TRUE(sim_->wait_until([&](const sim::simulator&) { return completed(ids) >= 40; }, 120s))
      << completed(ids) << " jobs completed" << log_tails();
  const auto before_kill = completed(ids);
  EXPECT_GT(answered(second_intake, 202), 0) << "the follower took no delivery";

  const auto killed = std::chrono::steady_clock::now();
  EXPECT_TRUE(WIFSIGNALED(first.stop(SIGKILL)));
  set_endpoints({second_intake});  // its endpoint leaves the Service (readiness fails)
  ASSERT_FALSE(second.wait_leading(lease_duration + retry_period + 15s).empty()) << log_tails();
  const auto took_over = std::chrono::steady_clock::now();
  // The new leader's first job start: when demand is served again.
  const auto at_takeover = completed(ids);
  ASSERT_TRUE(sim_->wait_until([&](const sim::simulator&) { return completed(ids) > at_takeover; }, 60s))
      << log_tails();
  const auto serving = std::chrono::steady_clock::now();
  ASSERT_TRUE(test::all_completed(*sim_, ids, 180s))
      << completed(ids) << " of 100 completed" << test::kubectl(c_, "-n " + ns_ + " get runners,pods")
      << log_tails();
  const auto done = std::chrono::steady_clock::now();
  auto seconds = [](auto d) { return std::to_string(std::chrono::duration<double>(d).count()); };
  RecordProperty("completed_before_kill", std::to_string(before_kill));
  RecordProperty("takeover_seconds", seconds(took_over - killed));
  RecordProperty("serving_again_seconds", seconds(serving - killed));
  RecordProperty("burst_seconds", seconds(done - started));
  RecordProperty("jit_configurations", std::to_string(sim_->calls("rest.generate_jitconfig")));
  RecordProperty("sweep_calls", std::to_string(sim_->calls("rest.list_runs") + sim_->calls("rest.run_jobs") +
                                               sim_->calls("rest.org_repos")));
  expect_each_ran_once(ids);
  expect_nothing_left("after the burst");
  // The unmatched job changed nothing: still queued, no runner for it; the
  // sweeps (every 10 s) did not count it as bad input again and again.
  EXPECT_EQ(sim_->job_state(unmatched), "queued");
  auto rejected = test::scrape_metric(second.wait_metrics(10s), "octorun_rejected_input_total",
                                      {"reason=\"no_matching_variant\""});
  EXPECT_TRUE(rejected.empty() || rejected == "1") << rejected;
  EXPECT_NE(second.log().find("no delivery brought"), std::string::npos)
      << "the new leader found nothing by its sweep" << second.log_tail();
}

TEST_F(WebhookFailover, JobsQueuedWhileTheOnlyManagerIsDownFor30SecondsAllRun) {
  auto& manager = start_replica("m");
  auto intake = manager.wait_leading(60s);
  ASSERT_FALSE(intake.empty()) << log_tails();
  set_endpoints({intake});
  test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", 0, 10);
  auto warm = queue(5);
  ASSERT_TRUE(test::all_completed(*sim_, warm, 90s)) << log_tails();

  const auto down = std::chrono::steady_clock::now();
  EXPECT_TRUE(WIFSIGNALED(manager.stop(SIGKILL)));
  const auto failed_before = sim_->calls("webhook.failed");
  auto ids = queue(30);
  // Every delivery of the queued jobs fails (nobody answers); GitHub does not redeliver.
  ASSERT_TRUE(sim_->wait_until(
      [&](const sim::simulator& s) { return s.calls("webhook.failed") - failed_before >= 30; }, 60s));
  // The scenario: the manager stays down for 30 s (not a synchronisation).
  std::this_thread::sleep_until(down + 30s);
  EXPECT_EQ(completed(ids), 0u);

  auto& again = start_replica("m-again");
  auto intake_again = again.wait_intake(60s);
  ASSERT_FALSE(intake_again.empty()) << log_tails();
  set_endpoints({intake_again});
  const auto restarted = std::chrono::steady_clock::now();
  ASSERT_FALSE(again.wait_leading(lease_duration + retry_period + 15s).empty()) << log_tails();
  ASSERT_TRUE(test::all_completed(*sim_, ids, 120s))
      << completed(ids) << " of 30 completed" << test::kubectl(c_, "-n " + ns_ + " get runners,pods")
      << log_tails();
  RecordProperty(
      "recovered_seconds",
      std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - restarted).count()));
  expect_each_ran_once(ids);
  expect_nothing_left("after the downtime");
}

}  // namespace
}  // namespace octorun
