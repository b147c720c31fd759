// The octorun binary against the GitHub simulator, held to its bounds as a
// watch sees them: maxRunners bounds the Runners that are not terminal at
// every instant (the watch records the most at once over the whole run), one
// JIT configuration per job and no other GitHub call per job in steady state,
// no idle runner left once demand is gone beyond the scale-down window — in
// both intakes, with GitHub's webhook deliveries arriving out of step with
// the scale set's messages. And with GitHub's rate limit spent: jobs run as
// the budget allows, finished runners go at once, the removals that must
// wait are done after the reset, and nothing leaks.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <regex>
#include <sstream>
#include <string>

#include "adapters/http/http_client.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/binary/binary_test_base.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"
#include "test/support/wiring.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

constexpr auto scale_down_window = 10s;  // the manager's (runnerset_actor_config)

sim::simulator_options bound_simulator() {
  sim::simulator_options o;
  o.long_poll = 20s;
  o.session_idle_timeout = 4s;
  return o;
}

class ManagerBound : public test::binary_test_base {
 protected:
  explicit ManagerBound(const sim::simulator_options& o = bound_simulator()) : binary_test_base("mgrb", o) {}

  // Starts the manager; GitHub's webhook deliveries go to its intake (under
  // the Listener intake too: they arrive out of step with the scale set's
  // messages, and must change nothing).
  void start_manager() {
    auto intake = start_manager_process(OCTORUN_BINARY, secret_);
    ASSERT_FALSE(intake.empty()) << manager_->log_tail();
    sim_->set_webhook(intake, secret_);
  }

  void create_set(const std::string& intake, int max_runners) {
    create_linux_set(intake, max_runners);
    // Deliveries sent before the controller knows the set are turned away
    // (no RunnerSet serves the repository yet): wait for its first status.
    test::wait_for_value([&] { return get("runnerset linux", "{.status.selector}"); },
                         std::string("octorun.io/runnerset=linux"), 60s, "the RunnerSet's first status",
                         [&] { return manager_->log_tail(); });
    if (intake == "Listener") {
      ASSERT_TRUE(sim_->wait_until([](const sim::simulator& s) { return s.session_open("linux"); }, 60s))
          << manager_->log_tail();
    }
  }

  std::string get(const std::string& what, const std::string& jsonpath) {
    return test::kubectl(c_, "-n " + ns_ + " get " + what + " -o jsonpath='" + jsonpath + "' 2>/dev/null");
  }

  // Nothing left: no Runner or pod (the watch), no JIT Secret, no runner on GitHub.
  void expect_nothing_left(std::chrono::milliseconds within) {
    EXPECT_TRUE(watch_->wait([](const test::namespace_watch& w) { return w.runners() == 0 && w.pods() == 0; },
                             within))
        << test::kubectl(c_, "-n " + ns_ + " get runners,pods") << manager_->log_tail();
    // A Runner's JIT Secret goes by garbage collection after the Runner: a moment later.
    EXPECT_EQ(
        test::poll(
            [&] { return test::kubectl(c_, "-n " + ns_ + " get secrets -l octorun.io/runner -o name"); },
            [](const std::string& s) { return s.empty(); }, 30s)
            .last,
        "");
    EXPECT_TRUE(sim_->wait_until(
        [](const sim::simulator& s) { return s.state_json().find("\"runners\":[]") != std::string::npos; },
        30s))
        << sim_->state_json();
  }

  // A burst of `jobs` jobs through `intake` with maxRunners `max`.
  void burst(const std::string& intake, int jobs, int max) {
    start_manager();
    create_set(intake, max);
    sim_->reset_counts();
    auto ids = test::queue_jobs(*sim_, jobs, 400ms);
    EXPECT_TRUE(test::all_completed(*sim_, ids, 180s)) << sim_->state_json() << manager_->log_tail();
    const auto done = std::chrono::steady_clock::now();
    // No idle runner is left once demand is gone beyond the scale-down window
    // (plus what removing one takes).
    expect_nothing_left(scale_down_window + 15s);
    EXPECT_LT(std::chrono::steady_clock::now() - done, scale_down_window + 15s);
    EXPECT_LE(watch_->most_not_terminal(), static_cast<std::size_t>(max))
        << "Runners not terminal at once, as the watch saw them";
    EXPECT_GE(watch_->most_not_terminal(), static_cast<std::size_t>(max)) << "the burst filled the pool";
    std::cout << "[ bound    ] " << intake << ": " << jobs << " jobs, maxRunners " << max
              << ", most Runners not terminal at once: " << watch_->most_not_terminal()
              << ", Runners made: " << watch_->runners_seen() << "\n";
  }

  std::string secret_ = "It's a Secret to Everybody";
};

TEST_F(ManagerBound, WebhookBurstStaysWithinMaxRunnersWithOneGitHubCallPerJob) {
  burst("Webhook", 20, 5);
  EXPECT_EQ(watch_->runners_seen(), 20u) << "one Runner per job";
  EXPECT_EQ(sim_->calls("rest.generate_jitconfig"), 20) << "one JIT configuration per job";
  EXPECT_EQ(sim_->calls("rest.delete_runner"), 0) << "GitHub removed each runner after its job";
}

TEST_F(ManagerBound, ListenerBurstStaysWithinMaxRunnersWithOneGitHubCallPerJob) {
  burst("Listener", 20, 5);
  EXPECT_EQ(watch_->runners_seen(), 20u) << "one Runner per job";
  EXPECT_EQ(sim_->calls("scaleset.generate_jitconfig"), 20) << "one JIT configuration per job";
  EXPECT_EQ(sim_->calls("scaleset.delete_agent"), 0) << "GitHub removed each runner after its job";
  EXPECT_EQ(sim_->calls("rest.generate_jitconfig"), 0);
}

// GitHub's rate limit, small and with a window of 90 s: long enough that the
// manager's calls do not sleep through it (waits over 60 s come back to the
// RunnerSet, which pauses), short enough for a test.
sim::simulator_options limited_simulator() {
  auto o = bound_simulator();
  o.rate_limit = 12;
  o.rate_limit_window = 90s;
  return o;
}

class ManagerRateLimit : public ManagerBound {
 protected:
  ManagerRateLimit() : ManagerBound(limited_simulator()) {}

  // One REST call with the manager's token; the response.
  http::response rest_call() {
    http::client client;
    client.set_plain_http(true);
    auto r = client.perform({"GET",
                             sim_->api_url() + "/orgs/acme/actions/runners",
                             {{"Authorization", "Bearer ghp_simulator"}},
                             {},
                             10s});
    return r ? *r : http::response{};
  }

  std::string runner_in_phase(const std::string& phase) {
    auto names =
        get("runners", "{range .items[?(@.status.phase==\"" + phase + "\")]}{.metadata.name}{\" \"}{end}");
    return names.substr(0, names.find(' '));
  }

  // The value of the set's series of `name` on the manager's /metrics.
  std::string metric(const std::string& name) {
    return test::scrape_metric(metrics_, name, {"runnerset=\"linux\""});
  }

  std::string metrics_;
};

TEST_F(ManagerRateLimit, ASpentBudgetPausesOnceFinishedRunnersGoAndRemovalsWaitForTheReset) {
  using clock = std::chrono::system_clock;
  auto t = [start = std::chrono::steady_clock::now()] {
    return std::to_string(
               std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
                   .count() /
               1000.0)
               .substr(0, 5) +
           " s";
  };
  // The token's window starts with this call.
  ASSERT_EQ(rest_call().status, 200);
  start_manager();
  metrics_ = manager_->wait_metrics(30s);
  // An idle buffer of one runner and two jobs that run until completed by hand: 3 runners, 2 busy.
  create_set("Webhook", 3);
  test::kubectl(
      c_, "-n " + ns_ + " patch runnerset linux --type=merge -p '{\"spec\":{\"minRunners\":1}}' >/dev/null");
  std::vector<std::int64_t> held;
  for (int i = 0; i < 2; ++i) {
    sim::job_spec j;
    j.repository = "acme/app";
    j.labels = {"self-hosted", "linux"};
    j.duration = -1ms;
    held.push_back(sim_->add_job(j));
  }
  ASSERT_TRUE(watch_->wait([](const test::namespace_watch& w) { return w.online() >= 3; }, 60s))
      << manager_->log_tail();
  ASSERT_TRUE(sim_->wait_until(
      [&](const sim::simulator& s) {
        return s.job_state(held[0]) == "running" && s.job_state(held[1]) == "running";
      },
      60s));
  // (Their phases land after the simulator's JobStarted.)
  const std::string running = "{range .items[?(@.status.phase==\"Running\")]}{.metadata.name}{\" \"}{end}";
  test::wait_for(
      [&] {
        auto names = get("runners", running);
        return std::count(names.begin(), names.end(), ' ') == 2;
      },
      30s, "two Runners Running");
  auto busy = get("runners", running);
  // (An idle runner publishes Pending once its pod has been there 3 s: the settle window.)
  test::wait_for([&] { return !runner_in_phase("Pending").empty(); }, 30s, "the idle Runner Pending");
  auto idle = runner_in_phase("Pending");
  ASSERT_FALSE(idle.empty()) << test::kubectl(c_, "-n " + ns_ + " get runners");
  std::cout << "[ timeline ] " << t() << ": 3 runners, 2 running held jobs, " << idle << " idle; "
            << sim_->calls("rest.generate_jitconfig") << " JIT calls\n";

  // Someone else spends the token's budget.
  http::response refused;
  for (int i = 0; i < 20 && refused.status != 403; ++i) refused = rest_call();
  ASSERT_EQ(refused.status, 403);
  const auto reset = clock::time_point(
      std::chrono::seconds(std::atoll(std::string(refused.header_value("x-ratelimit-reset")).c_str())));
  ASSERT_GT(reset - clock::now(), 65s) << "too slow a start: the manager would sleep through the reset";
  std::cout << "[ timeline ] " << t() << ": budget spent; it resets in "
            << std::chrono::duration_cast<std::chrono::seconds>(reset - clock::now()).count() << " s\n";

  // The idle runner's process ends without a job (run.sh exits 0): it can
  // run no job, so it goes now; its GitHub removal waits for the reset. (Not
  // a deprecated exit, 7: that stops the variant's runners until its
  // template changes, runner_version_actor_test.cpp.)
  test::runner_pod_exits(c_, ns_, idle, 0);
  http::client sim_control;
  sim_control.set_plain_http(true);  // the simulator serves plain http
  auto offline =
      sim_control.perform({"POST", sim_->base_url() + "/_sim/runners/" + idle + "/offline", {}, "{}", 5s});
  ASSERT_TRUE(offline) << offline.error().message;
  ASSERT_EQ(offline->status, 200) << offline->body;
  EXPECT_TRUE(
      watch_->wait([&](const test::namespace_watch& w) { return w.runner_deleted().count(idle) > 0; }, 30s))
      << manager_->log_tail();
  EXPECT_LT(clock::now(), reset) << "the finished runner waited for the reset";
  std::cout << "[ timeline ] " << t() << ": " << idle
            << " (Succeeded, no job) is gone; its GitHub removal waits: "
            << get("runnerset linux", "{.status.pendingRemovals[*].name}") << "\n";
  EXPECT_EQ(get("runnerset linux", "{.status.pendingRemovals[*].name}"), idle);
  EXPECT_NE(sim_->state_json().find("\"name\":\"" + idle + "\""), std::string::npos)
      << "removed from GitHub already?";
  EXPECT_EQ(metric("octorun_github_rate_limited"), "1");

  // More jobs come; the held jobs end: their runners go at once (GitHub removed them itself).
  auto queued = test::queue_jobs(*sim_, 2, 500ms);
  for (auto id : held) sim_->complete_job(id);
  EXPECT_TRUE(watch_->wait(
      [&](const test::namespace_watch& w) {
        std::istringstream names(busy);
        int gone = 0;
        for (std::string n; names >> n;) gone += w.runner_deleted().count(n) > 0 ? 1 : 0;
        return gone == 2;
      },
      30s))
      << test::kubectl(c_, "-n " + ns_ + " get runners") << manager_->log_tail();
  EXPECT_LT(clock::now(), reset) << "finished runners waited for the reset";
  std::cout << "[ timeline ] " << t() << ": the held jobs' runners are gone; " << queued.size()
            << " jobs wait for the budget\n";
  EXPECT_EQ(sim_->job_state(queued[0]), "queued");

  // The reset: new runners first, then the removal that waited.
  EXPECT_TRUE(test::all_completed(*sim_, queued, 90s)) << sim_->state_json() << manager_->log_tail();
  std::cout << "[ timeline ] " << t() << ": after the reset both jobs ran\n";
  EXPECT_TRUE(sim_->wait_until(
      [&](const sim::simulator& s) {
        return s.state_json().find("\"name\":\"" + idle + "\"") == std::string::npos;
      },
      30s))
      << "the deferred removal was not done: " << sim_->state_json();
  test::wait_for_value([&] { return get("runnerset linux", "{.status.pendingRemovals}"); }, std::string(""),
                       30s, "no removal left");
  std::cout << "[ timeline ] " << t() << ": the deferred removal is done\n";
  EXPECT_EQ(metric("octorun_github_rate_limited"), "0");
  EXPECT_EQ(metric("octorun_github_rate_limit_pauses_total"), "1");
  auto log = manager_->log();
  const std::regex pause_line("GitHub's rate limit is spent");
  auto pauses =
      std::distance(std::sregex_iterator(log.begin(), log.end(), pause_line), std::sregex_iterator());
  EXPECT_EQ(pauses, 1) << "the pause is logged once";

  // Demand gone: the idle buffer goes too; nothing leaks.
  test::kubectl(
      c_, "-n " + ns_ + " patch runnerset linux --type=merge -p '{\"spec\":{\"minRunners\":0}}' >/dev/null");
  expect_nothing_left(scale_down_window + 30s);
  std::cout << "[ timeline ] " << t() << ": nothing left; GitHub calls: JIT "
            << sim_->calls("rest.generate_jitconfig") << ", delete " << sim_->calls("rest.delete_runner")
            << "\n";
}

}  // namespace
}  // namespace octorun
