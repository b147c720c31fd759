// The octorun binary when GitHub's deliveries misbehave and when it runs as
// two replicas. A relay between the simulator and the manager holds the
// simulator's signed workflow_job deliveries and forwards them as the test
// says: twice with the same X-GitHub-Delivery, or out of order. Two
// replicas share one Lease: only the holder reconciles and takes webhooks;
// when it is killed the other takes over once the Lease expires.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <regex>

#include "adapters/http/http_client.hpp"
#include "adapters/http/http_server.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/binary/replicas_test_base.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"
#include "test/support/wiring.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

// The manager's Lease (cmd/octorun/main.cpp) and the election's retry period.
constexpr auto lease_duration = 15s;
constexpr auto retry_period = 2s;

struct delivery {
  std::string event, id, signature, body, action;
  std::int64_t job = 0;
};

class ManagerBinaryFaults : public test::replicas_test_base {
 protected:
  ManagerBinaryFaults() : replicas_test_base("mgrf", {}) {
    auto server = http::server::start(
        {}, {{"/hook", {"POST"}, http::request_body::accepted, [this](const http::server_request& r) {
                return on_delivery(r);
              }}});
    if (!server) ADD_FAILURE() << server.error();
    relay_ = std::move(*server);
  }

  ~ManagerBinaryFaults() override { relay_.reset(); }

  // The simulator delivers to the relay, which forwards to `intake` according
  // to `forward_times` (0: hold everything for the test to forward).
  void relay_to(const std::string& intake, int forward_times) {
    {
      std::lock_guard l(mu_);
      intake_ = intake;
      forward_times_ = forward_times;
    }
    sim_->set_webhook(relay_->base_url() + "/hook", secret_);
  }

  http::server_response on_delivery(const http::server_request& r) {
    delivery d{std::string(r.header_value("x-github-event")),
               std::string(r.header_value("x-github-delivery")),
               std::string(r.header_value("x-hub-signature-256")),
               r.body,
               {},
               0};
    rapidjson::Document doc;
    doc.Parse(r.body.data(), r.body.size());
    if (!doc.HasParseError() && doc.IsObject()) {
      if (auto a = doc.FindMember("action"); a != doc.MemberEnd() && a->value.IsString())
        d.action = a->value.GetString();
      if (auto j = doc.FindMember("workflow_job"); j != doc.MemberEnd() && j->value.IsObject())
        if (auto id = j->value.FindMember("id"); id != j->value.MemberEnd() && id->value.IsInt64())
          d.job = id->value.GetInt64();
    }
    int times;
    {
      std::lock_guard l(mu_);
      received_.push_back(d);
      times = forward_times_;
    }
    received_cv_.notify_all();
    // Forwarded in the handler: the simulator sends one delivery at a time,
    // so the manager sees them in the simulator's order.
    for (int i = 0; i < times; ++i) forward(d);
    return {200, "text/plain", "relayed", {}};
  }

  // Sends `d` to the manager as GitHub would; records the manager's answer.
  http::response forward(const delivery& d) {
    std::string intake;
    {
      std::lock_guard l(mu_);
      intake = intake_;
    }
    http::client client;
    client.set_plain_http(true);
    auto r = client.perform({"POST",
                             intake,
                             {{"Content-Type", "application/json"},
                              {"X-GitHub-Event", d.event},
                              {"X-GitHub-Delivery", d.id},
                              {"X-Hub-Signature-256", d.signature}},
                             d.body});
    EXPECT_TRUE(r.has_value()) << "the intake did not answer";
    auto out = r ? *r : http::response{};
    std::lock_guard l(mu_);
    answers_.emplace_back(out.status, out.body);
    return out;
  }

  // The delivery for `job` with `action`, once the relay has it.
  delivery received(std::int64_t job, const std::string& action, std::chrono::seconds within = 60s) {
    std::unique_lock l(mu_);
    delivery out;
    bool got = received_cv_.wait_for(l, within, [&] {
      for (const auto& d : received_)
        if (d.job == job && d.action == action) {
          out = d;
          return true;
        }
      return false;
    });
    EXPECT_TRUE(got) << "no " << action << " delivery for job " << job;
    return out;
  }

  std::int64_t add_job(std::chrono::milliseconds duration) {
    sim::job_spec j;
    j.repository = "acme/app";
    j.labels = {"self-hosted", "linux"};
    j.duration = duration;
    return sim_->add_job(j);
  }

  bool all_completed(const std::vector<std::int64_t>& ids, std::chrono::seconds within = 120s) {
    return sim_->wait_until(
        [&](const sim::simulator& s) {
          return std::all_of(ids.begin(), ids.end(), [&](auto id) { return s.job_state(id) == "completed"; });
        },
        within);
  }

  std::string runner_of(std::int64_t job) {
    auto state = sim_->state_json();
    std::smatch m;
    std::regex re("\\{\"id\":" + std::to_string(job) + ",[^}]*\"runner_name\":\"([^\"]*)\"");
    return std::regex_search(state, m, re) ? m[1].str() : std::string{};
  }

  std::int64_t jit_calls() { return sim_->calls("rest.generate_jitconfig"); }

  std::string lease_holder() {
    return test::kubectl(c_, "-n " + ns_ + " get lease octorun-manager -o jsonpath='{.spec.holderIdentity}'");
  }

  std::unique_ptr<http::server> relay_;
  std::mutex mu_;
  std::condition_variable received_cv_;
  std::vector<delivery> received_;
  std::vector<std::pair<long, std::string>> answers_;
  std::string intake_;
  int forward_times_ = 1;
};

TEST_F(ManagerBinaryFaults, EveryDeliverySentTwiceCountsOnce) {
  auto& manager = start_manager("replica-0");
  auto intake = manager.wait_leading(60s);
  ASSERT_FALSE(intake.empty()) << log_tails();
  relay_to(intake, 2);
  // maxRunners well above twice the jobs: a double-counted job would show as
  // an extra runner instead of being capped away.
  test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", 0, 8);
  test::wait_for_value(
      [&] {
        return test::kubectl(c_, "-n " + ns_ + " get runnerset linux -o jsonpath='{.status.selector}'");
      },
      std::string("octorun.io/runnerset=linux"), 60s, "the RunnerSet's first status");
  std::vector<std::int64_t> jobs = {add_job(500ms), add_job(500ms), add_job(500ms)};
  // A job of a repository no RunnerSet serves: turned away, nothing else changes.
  sim::job_spec elsewhere;
  elsewhere.repository = "other/app";
  elsewhere.labels = {"self-hosted", "linux"};
  sim_->add_job(elsewhere);
  ASSERT_TRUE(all_completed(jobs)) << log_tails();
  expect_nothing_left("after the jobs");
  // Bad input is counted (and logged once).
  const auto metrics = manager.wait_metrics(10s);
  EXPECT_EQ(test::scrape_metric(metrics, "octorun_rejected_input_total",
                                {"reason=\"duplicate_delivery\"", "source=\"webhook\""}),
            "10")
      << "each of the 10 deliveries, sent twice";
  EXPECT_EQ(test::scrape_metric(metrics, "octorun_rejected_input_total", {"reason=\"unserved_repository\""}),
            "1");
  const auto log = manager.log();
  EXPECT_NE(log.find("no RunnerSet serves the repository other/app"), std::string::npos) << log_tails();

  EXPECT_EQ(jit_calls(), 3) << "one JIT runner per job" << log_tails();
  EXPECT_EQ(watch_->runners_seen(), 3u) << "one Runner per job";
  std::lock_guard l(mu_);
  // Each job's queued, in_progress and completed (and the other repository's
  // queued), every one sent twice: the first accepted, the second recognised
  // by its delivery id.
  ASSERT_EQ(received_.size(), 10u);
  ASSERT_EQ(answers_.size(), 20u);
  for (size_t i = 0; i < answers_.size(); i += 2) {
    EXPECT_EQ(answers_[i].first, 202) << answers_[i].second;
    EXPECT_EQ(answers_[i + 1].first, 200);
    EXPECT_EQ(answers_[i + 1].second.find("duplicate delivery") != std::string::npos, true)
        << answers_[i + 1].second;
  }
}

TEST_F(ManagerBinaryFaults, OutOfOrderDeliveriesEndEachJobOnce) {
  auto intake = start_manager("replica-0").wait_leading(60s);
  ASSERT_FALSE(intake.empty()) << log_tails();
  relay_to(intake, 0);  // the test forwards
  // One idle runner waits online: a job queued now starts at once.
  test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", 1, 4);
  ASSERT_TRUE(watch_->wait([](const auto& w) { return w.online() == 1; }, 60s)) << log_tails();

  // Job A runs and completes on that runner; the manager hears completed,
  // then in_progress, then queued (a job's actions only move forward: the
  // intake turns a queued after its job's end away, as it would a replay).
  auto a = add_job(0ms);
  auto a_queued = received(a, "queued"), a_started = received(a, "in_progress"),
       a_done = received(a, "completed");
  for (const auto* d : {&a_done, &a_started}) EXPECT_EQ(forward(*d).status, 202);
  EXPECT_EQ(forward(a_queued).status, 200);
  auto runner_a = runner_of(a);
  EXPECT_FALSE(runner_a.empty());

  // The runner A ran is replaced (minRunners 1); job B starts on the new one,
  // and the manager hears in_progress before queued, then completed.
  auto b = add_job(-1ms);
  auto b_queued = received(b, "queued"), b_started = received(b, "in_progress");
  EXPECT_EQ(forward(b_started).status, 202);
  EXPECT_EQ(forward(b_queued).status, 200) << "a queued after its job's start";
  auto runner_b = runner_of(b);
  ASSERT_TRUE(sim_->complete_job(b));
  EXPECT_EQ(forward(received(b, "completed")).status, 202);

  // Both runners are gone; one idle runner remains (minRunners), and none
  // more: a late queued counted as demand would hold a second one.
  ASSERT_TRUE(watch_->wait(
      [&](const auto& w) {
        auto gone = w.runner_deleted();
        return gone.count(runner_a) && gone.count(runner_b) && w.runners() == 1;
      },
      60s))
      << test::kubectl(c_, "-n " + ns_ + " get runners") << log_tails();
  EXPECT_EQ(test::kubectl(
                c_, "-n " + ns_ +
                        " wait runnerset/linux --for=jsonpath='{.status.desiredReplicas}'=1 --timeout=30s "
                        "-o jsonpath='{.status.desiredReplicas}'"),
            "1");
  EXPECT_EQ(watch_->runners(), 1u);
  // Three runners, each registered once: the first, its replacement after A,
  // B's replacement. A runner whose job completed stops serving demand when
  // the completion lowers the demand (it holds its maxRunners slot until its
  // Succeeded lands), so the idle one is not scaled down and replaced in between; no runner GitHub
  // handed a job is ever being deleted before that job ended. (A's late start
  // may find A's runner finished and already being deleted: the log says
  // "finished" for that.)
  EXPECT_EQ(jit_calls(), 3) << log_tails();
  EXPECT_EQ(watch_->runners_seen(), 3u);
  for (const auto& m : managers_)
    EXPECT_EQ(m->log().find("started on a runner that is being deleted"), std::string::npos) << log_tails();
  // A's late queued and B's queued after its start (turned away by the
  // intake), and A's late start if its runner was still there (by the set),
  // are bad input: counted, nothing else changed.
  const auto metrics = managers_.front()->wait_metrics(10s);
  EXPECT_EQ(test::scrape_metric(metrics, "octorun_rejected_input_total", {"reason=\"replayed_delivery\""}),
            "2");
  auto stale = test::scrape_metric(metrics, "octorun_rejected_input_total", {"reason=\"stale_delivery\""});
  EXPECT_TRUE(stale.empty() || stale == "1") << stale;

  test::kubectl(
      c_, "-n " + ns_ + " patch runnerset linux --type=merge -p '{\"spec\":{\"minRunners\":0}}' >/dev/null");
  auto jit = jit_calls();
  expect_nothing_left("after scaling to zero");
  EXPECT_EQ(jit_calls(), jit) << "scaling down created a runner";
}

TEST_F(ManagerBinaryFaults, OneOfTwoReplicasLeadsAndTheOtherTakesOverWhenItIsKilled) {
  auto& first = start_manager("replica-0");
  auto intake = first.wait_leading(60s);
  ASSERT_FALSE(intake.empty()) << log_tails();
  auto& second = start_manager("replica-1");
  auto health = second.wait_health(60s);
  ASSERT_FALSE(health.empty()) << log_tails();
  http::client probe;
  probe.set_plain_http(true);
  auto ready = probe.perform({"GET", health + "/readyz", {}, ""});
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->body, "standby");

  relay_to(intake, 1);
  test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", 0, 4);
  std::vector<std::int64_t> before = {add_job(500ms), add_job(500ms), add_job(500ms)};
  ASSERT_TRUE(all_completed(before)) << log_tails();
  expect_nothing_left("served by the first replica");
  EXPECT_EQ(lease_holder(), "replica-0");
  // The follower never ran a controller or an intake.
  EXPECT_EQ(second.log().find("controller: watching"), std::string::npos) << second.log_tail();
  EXPECT_EQ(second.log().find("webhook intake listening"), std::string::npos) << second.log_tail();

  auto killed = std::chrono::steady_clock::now();
  EXPECT_TRUE(WIFSIGNALED(first.stop(SIGKILL)));
  // The Lease must expire before the other replica may take it.
  auto taken_over = second.wait_leading(lease_duration + retry_period + 15s);
  ASSERT_FALSE(taken_over.empty()) << log_tails();
  auto after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  RecordProperty("takeover_seconds", std::to_string(after_s));
  EXPECT_LE(after_s, std::chrono::duration<double>(lease_duration + 2 * retry_period).count())
      << "took over after " << after_s << " s";
  EXPECT_EQ(lease_holder(), "replica-1");

  relay_to(taken_over, 1);
  auto jit_before = jit_calls();
  std::vector<std::int64_t> after = {add_job(500ms), add_job(500ms), add_job(500ms)};
  ASSERT_TRUE(all_completed(after)) << test::kubectl(c_, "-n " + ns_ + " get runnerset,runners,pods -o wide")
                                    << sim_->state_json() << log_tails();
  expect_nothing_left("served by the second replica");
  EXPECT_EQ(jit_calls() - jit_before, 3) << log_tails();

  auto status = second.stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log_tails();
  EXPECT_EQ(lease_holder(), "") << "the Lease was not released";
}

// Everything of a set deleted at once while no leader serves it, its
// credentials Secret too (what a namespace deletion does): the next leader
// still removes the set's runners from GitHub, because the set's finalizer
// keeps the Secret until GitHub holds none of them (issue 17, finding 5e).
TEST_F(ManagerBinaryFaults, ASetDeletedWithItsSecretWhileNoLeaderServesLeavesNoGitHubRunner) {
  auto& first = start_manager("replica-0");
  ASSERT_FALSE(first.wait_leading(60s).empty()) << log_tails();
  test::create_runnerset(c_, ns_, sim_->ghes_url() + "/acme", 2, 4);
  ASSERT_TRUE(sim_->wait_until(
      [](const sim::simulator& s) {
        auto state = s.state_json();
        std::size_t n = 0;
        for (auto at = state.find("\"ephemeral\":true"); at != std::string::npos;
             at = state.find("\"ephemeral\":true", at + 1))
          ++n;
        return n == 2;
      },
      60s))
      << sim_->state_json() << log_tails();
  const std::string secret_finalizers =
      "-n " + ns_ + " get secret/github -o jsonpath='{.metadata.finalizers[*]}' 2>/dev/null || true";
  EXPECT_TRUE(test::wait_for_value([&] { return kubectl(c_, secret_finalizers); },
                                   std::string("runnerset.octorun.io/linux"), 30s,
                                   "the Secret's finalizers"));

  EXPECT_TRUE(WIFSIGNALED(first.stop(SIGKILL)));
  kubectl(c_, "-n " + ns_ + " delete runnerset/linux secret/github --wait=false >/dev/null");
  kubectl(c_, "-n " + ns_ + " delete runners --all --wait=false >/dev/null");
  EXPECT_EQ(
      kubectl(c_, "-n " + ns_ + " get secret/github -o jsonpath='{.metadata.deletionTimestamp}'").empty(),
      false)
      << "the Secret waits for the set's finalizer";

  auto& second = start_manager("replica-1");
  ASSERT_FALSE(second.wait_leading(lease_duration + retry_period + 30s).empty()) << log_tails();
  auto gone = [&](const std::string& what, std::chrono::seconds within) {
    return kubectl(c_, "-n " + ns_ + " wait --for=delete " + what +
                           " --timeout=" + std::to_string(within.count()) +
                           "s >/dev/null 2>&1 && echo gone || echo present") == "gone\n";
  };
  EXPECT_TRUE(gone("runnerset/linux", 120s)) << log_tails();
  EXPECT_TRUE(gone("secret/github", 30s)) << log_tails();
  expect_nothing_left("a set deleted with its Secret while no leader served it");
}

}  // namespace
}  // namespace octorun
