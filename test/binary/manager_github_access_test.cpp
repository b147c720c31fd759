// What a RunnerSet says when GitHub refuses its credentials (401) or cannot
// show them its scope (404), through both intakes, on the real control plane
// with the octorun binary and the GitHub simulator (which answers 401 "Bad
// credentials" to a token it does not know and 404 to an organisation it
// does not have): CredentialsReady=False with the reason, a message and a
// lastTransitionTime, and exactly one Warning Event however often the set
// tries again (docs/github-network.md).
#include <gtest/gtest.h>

#include <chrono>
#include <regex>

#include "test/binary/binary_harness.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/poll.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wiring.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

class ManagerGitHubAccess : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::install_crds(test::cluster()); }

  ManagerGitHubAccess() : c_(test::cluster()) {
    auto sim = sim::simulator::start({});
    if (!sim) ADD_FAILURE() << sim.error();
    sim_ = std::move(*sim);
    sim_->add_organization("acme");
    ns_ = test::make_namespace(c_, "ghacc");
  }

  ~ManagerGitHubAccess() override {
    if (manager_ && !HasFailure()) std::remove(manager_->log_path().c_str());
    manager_.reset();
    test::kubectl(c_, "delete namespace " + ns_ + " --wait=false >/dev/null");
  }

  // The manager with the webhook intake, retrying often: a Listener set
  // plans (and asks GitHub again) every resync, a Webhook set sweeps
  // GitHub's queue every second.
  void start() {
    auto args = test::octorun_args(c_.kubeconfig, ns_, "access");
    args.push_back("--resync-seconds=1");
    args.push_back("--webhook-sweep-seconds=1");
    manager_ = std::make_unique<test::octorun_process>(OCTORUN_BINARY, std::move(args), "s3cret",
                                                       "/tmp/octorun-manager-" + ns_ + ".log");
    ASSERT_TRUE(manager_->wait_leads(60s)) << manager_->log_tail();
  }

  void secret(const std::string& name, const std::string& token) {
    test::kubectl(c_, "-n " + ns_ + " create secret generic " + name +
                          " --from-literal=github_token=" + token + " >/dev/null");
  }

  void create_set(const std::string& name, const std::string& intake, const std::string& org,
                  const std::string& secret_name, int min_runners = 0) {
    test::kubectl(
        c_, "-n " + ns_ + " create -f - >/dev/null <<'EOF'\n" +
                R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" + name +
                R"("},"spec":{"scopeURL":")" + sim_->ghes_url() + "/" + org +
                R"(","credentialsSecretName":")" + secret_name + R"(","intake":")" + intake +
                R"(","runnerLabels":[")" + name + R"("],"minRunners":)" + std::to_string(min_runners) +
                R"(,"maxRunners":2,"template":{"spec":{"containers":[{"name":"runner","image":"r:1"}]}}}})"
                "\nEOF");
  }

  std::string get(const std::string& what) { return test::kubectl(c_, "-n " + ns_ + " get " + what); }

  // "status|reason|message|lastTransitionTime|observedGeneration|generation"
  // of the set's CredentialsReady condition.
  std::string credentials_ready(const std::string& set) {
    const std::string c = "{.status.conditions[?(@.type==\"CredentialsReady\")]";
    return get("runnerset " + set + " -o jsonpath='" + c + ".status}|" + c + ".reason}|" + c + ".message}|" +
               c + ".lastTransitionTime}|" + c + ".observedGeneration}|{.metadata.generation}'");
  }

  std::string wait_reason(const std::string& set, const std::string& status_reason) {
    return test::poll([&] { return credentials_ready(set); },
                      [&](const std::string& s) { return s.starts_with(status_reason + "|"); }, 90s)
        .last;
  }

  // "reason|note" of each Warning Event regarding the set, one a line.
  std::string warnings(const std::string& set) {
    return get("events.events.k8s.io --field-selector regarding.kind=RunnerSet,regarding.name=" + set +
               ",type=Warning -o jsonpath='{range .items[*]}{.reason}|{.note}{\"\\n\"}{end}'");
  }

  std::int64_t rest_calls() const {
    std::int64_t n = 0;
    for (const auto& [endpoint, count] : sim_->call_counts())
      if (endpoint.starts_with("rest.")) n += count;
    return n;
  }

  const test::cluster_info& c_;
  std::string ns_;
  std::unique_ptr<sim::simulator> sim_;
  std::unique_ptr<test::octorun_process> manager_;
};

TEST_F(ManagerGitHubAccess, RefusedCredentialsAndAnUnseenScopeAreSaidOnceThroughBothIntakes) {
  start();
  secret("refused", "ghp_not_known_to_github");
  secret("github", "ghp_simulator");
  struct expected_state {
    std::string set, reason, in_message;
  };
  const std::vector<expected_state> sets{
      {"listener-refused", "CredentialsRefused", "Bad credentials"},
      {"listener-unseen", "ScopeNotFound", "/nosuch"},
      {"webhook-refused", "CredentialsRefused", "Bad credentials"},
      {"webhook-unseen", "ScopeNotFound", "/nosuch"},
  };
  create_set("listener-refused", "Listener", "acme", "refused");
  create_set("listener-unseen", "Listener", "nosuch", "github");
  create_set("webhook-refused", "Webhook", "acme", "refused");
  create_set("webhook-unseen", "Webhook", "nosuch", "github");

  for (const auto& e : sets) {
    auto got = wait_reason(e.set, "False|" + e.reason);
    ASSERT_TRUE(got.starts_with("False|" + e.reason + "|")) << e.set << ": " << got << "\n"
                                                            << manager_->log_tail();
    EXPECT_NE(got.find(e.in_message), std::string::npos) << e.set << ": " << got;
    EXPECT_TRUE(std::regex_search(got, std::regex(R"(\|20[0-9-]+T[0-9:]+Z\|1\|1$)")))
        << e.set << ": lastTransitionTime, observedGeneration = generation: " << got;
  }
  // The sets go on trying (a resync or a sweep a second): GitHub refuses
  // each time, and each set still has its one Warning.
  const auto before = rest_calls();
  EXPECT_TRUE(sim_->wait_until([&](const sim::simulator&) { return rest_calls() >= before + 16; }, 60s))
      << "calls: " << before << " -> " << rest_calls();
  for (const auto& e : sets) {
    auto events = warnings(e.set);
    EXPECT_EQ(std::count(events.begin(), events.end(), '\n'), 1) << e.set << ":\n" << events;
    EXPECT_TRUE(events.starts_with(e.reason + "|")) << e.set << ":\n" << events;
    EXPECT_NE(events.find(e.in_message), std::string::npos) << e.set << ":\n" << events;
  }
  EXPECT_EQ(manager_->stop(SIGTERM), 0) << manager_->log_tail();
}

// Secrets are not watched (docs/security.md): the credentials Secret is
// read by name when the set changes and on every resync, so one rotated in
// place (its data changed, the set untouched) is in use within a resync.
TEST_F(ManagerGitHubAccess, ACredentialsSecretRotatedInPlaceIsInUseWithinAResync) {
  start();
  secret("github", "ghp_not_known_to_github");
  create_set("rotated", "Listener", "acme", "github", 1);
  auto refused = wait_reason("rotated", "False|CredentialsRefused");
  ASSERT_TRUE(refused.starts_with("False|CredentialsRefused|")) << refused << "\n" << manager_->log_tail();
  test::kubectl(
      c_, "-n " + ns_ +
              R"( patch secret github --type=merge -p '{"stringData":{"github_token":"ghp_simulator"}}')"
              " >/dev/null");
  auto ready = wait_reason("rotated", "True");
  EXPECT_TRUE(ready.starts_with("True|")) << ready << "\n" << manager_->log_tail();
  EXPECT_TRUE(
      test::poll([&] { return get("runners -o name"); }, [](const std::string& r) { return !r.empty(); }, 60s)
          .met)
      << "a runner on the new credentials";
  EXPECT_EQ(manager_->stop(SIGTERM), 0) << manager_->log_tail();
}

// A Runner GitHub will not register says why on itself: Pending (it exists
// and has no job), Registered=False reason RegistrationFailed with GitHub's
// answer, and one Warning Event of its own however often it asks again.
TEST_F(ManagerGitHubAccess, ARunnerGitHubRefusesToRegisterSaysWhy) {
  start();
  secret("refused", "ghp_not_known_to_github");
  create_set("kept", "Webhook", "acme", "refused", /*min_runners=*/1);
  auto runner = test::poll([&] { return get("runners -o jsonpath='{.items[*].metadata.name}'"); },
                           [](const std::string& s) { return !s.empty(); }, 60s)
                    .last;
  ASSERT_FALSE(runner.empty()) << manager_->log_tail();
  const std::string c = "{.status.conditions[?(@.type==\"Registered\")]";
  auto said =
      test::poll(
          [&] {
            return get("runner " + runner + " -o jsonpath='{.status.phase}|" + c + ".status}|" + c +
                       ".reason}|" + c + ".message}'");
          },
          [](const std::string& s) { return s.starts_with("Pending|False|RegistrationFailed|"); }, 60s)
          .last;
  EXPECT_TRUE(said.starts_with("Pending|False|RegistrationFailed|")) << said << "\n" << manager_->log_tail();
  EXPECT_NE(said.find("Bad credentials"), std::string::npos) << said;
  // It asks again (its backoff), and says nothing more.
  const auto before = sim_->call_counts()["rest.generate_jitconfig"];
  EXPECT_TRUE(sim_->wait_until(
      [&](const sim::simulator& s) { return s.call_counts()["rest.generate_jitconfig"] >= before + 2; },
      90s));
  auto events = get("events.events.k8s.io --field-selector regarding.kind=Runner,regarding.name=" + runner +
                    ",type=Warning -o jsonpath='{range .items[*]}{.reason}{\"\\n\"}{end}'");
  EXPECT_EQ(events, "RegistrationFailed\n");
  EXPECT_EQ(manager_->stop(SIGTERM), 0) << manager_->log_tail();
}

}  // namespace
}  // namespace octorun
