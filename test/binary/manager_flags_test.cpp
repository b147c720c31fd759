// The octorun binary's deployment flags against the real control plane:
// --webhook-intake=false (no webhook server, no secret; a Webhook RunnerSet
// says so in its IntakeReady condition) and --namespaces=a,b (sets in a and
// b served, one in c ignored).
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <thread>

#include "test/binary/binary_harness.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wiring.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

class ManagerFlags : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::install_crds(test::cluster()); }

  ManagerFlags() : c_(test::cluster()) {
    auto sim = sim::simulator::start({});
    if (!sim) ADD_FAILURE() << sim.error();
    sim_ = std::move(*sim);
    sim_->add_organization("acme");
  }

  ~ManagerFlags() override {
    if (manager_ && !HasFailure()) std::remove(manager_->log_path().c_str());
    manager_.reset();
    for (const auto& ns : namespaces_)
      test::kubectl(c_, "delete namespace " + ns + " --wait=false >/dev/null");
  }

  std::string fresh_namespace(const std::string& prefix) {
    namespaces_.push_back(test::make_namespace(c_, prefix));
    return namespaces_.back();
  }

  // The binary on the test options of `ns`, `extra` replacing those of the same flag.
  void start(const std::string& ns, const std::vector<std::string>& extra, const std::string& secret) {
    auto args = test::octorun_args(c_.kubeconfig, ns, "flags");
    for (const auto& e : extra) {
      auto key = e.substr(0, e.find('='));
      std::erase_if(args, [&](const std::string& a) { return a.substr(0, a.find('=')) == key; });
      args.push_back(e);
    }
    manager_ = std::make_unique<test::octorun_process>(OCTORUN_BINARY, std::move(args), secret,
                                                       "/tmp/octorun-manager-" + ns + ".log");
    ASSERT_TRUE(manager_->wait_leads(60s)) << manager_->log_tail();
  }

  // kubectl's jsonpath output for the RunnerSet "linux" in `ns`.
  std::string set_field(const std::string& ns, const std::string& jsonpath) {
    return test::kubectl(c_, "-n " + ns + " get runnerset linux -o jsonpath='" + jsonpath + "' 2>/dev/null");
  }

  // The apiserver offers the status as a watch, but kubectl is what the
  // other binary tests read: poll it until `want` or the deadline.
  std::string wait_field(const std::string& ns, const std::string& jsonpath, const std::string& want,
                         std::chrono::seconds within = 60s) {
    auto deadline = std::chrono::steady_clock::now() + within;
    std::string got;
    while (std::chrono::steady_clock::now() < deadline) {
      got = set_field(ns, jsonpath);
      if (got == want) break;
      std::this_thread::sleep_for(200ms);
    }
    return got;
  }

  const test::cluster_info& c_;
  std::vector<std::string> namespaces_;
  std::unique_ptr<sim::simulator> sim_;
  std::unique_ptr<test::octorun_process> manager_;
};

TEST_F(ManagerFlags, WithoutTheWebhookIntakeStartsWithNoSecretAndAWebhookSetSaysSo) {
  auto ns = fresh_namespace("mgrf");
  start(ns, {"--webhook-intake=false"}, /*secret=*/"");
  EXPECT_NE(manager_->log().find("no webhook intake (--webhook-intake=false)"), std::string::npos);
  EXPECT_EQ(manager_->log().find("webhook intake listening"), std::string::npos) << "no webhook server";
  test::create_runnerset(c_, ns, sim_->ghes_url() + "/acme", 0, 2);
  EXPECT_EQ(
      wait_field(ns, R"({.status.conditions[?(@.type=="IntakeReady")].reason})", "WebhookIntakeDisabled"),
      "WebhookIntakeDisabled")
      << manager_->log_tail();
  EXPECT_EQ(set_field(ns, R"({.status.conditions[?(@.type=="IntakeReady")].status})"), "False");
  EXPECT_NE(
      set_field(ns, R"({.status.conditions[?(@.type=="IntakeReady")].message})").find("--webhook-intake"),
      std::string::npos);
  // The set is otherwise served as before: its credentials load.
  EXPECT_EQ(wait_field(ns, R"({.status.conditions[?(@.type=="CredentialsReady")].status})", "True"), "True")
      << manager_->log_tail();
  EXPECT_EQ(manager_->stop(SIGTERM), 0) << manager_->log_tail();
}

TEST_F(ManagerFlags, WithTheWebhookIntakeAWebhookSetHasNoIntakeCondition) {
  auto ns = fresh_namespace("mgrf");
  start(ns, {}, "s3cret");
  test::create_runnerset(c_, ns, sim_->ghes_url() + "/acme", 0, 2);
  EXPECT_EQ(wait_field(ns, R"({.status.conditions[?(@.type=="CredentialsReady")].status})", "True"), "True")
      << manager_->log_tail();
  EXPECT_EQ(set_field(ns, R"({.status.conditions[*].type})"),
            "CredentialsReady ClassAdmitted PodConfigReady RunnerVersionCurrent");
}

TEST_F(ManagerFlags, ServesTheListedNamespacesOnly) {
  auto a = fresh_namespace("mgra");
  auto b = fresh_namespace("mgrb");
  auto c = fresh_namespace("mgrc");
  start(a, {"--namespaces=" + a + "," + b}, "s3cret");
  for (const auto& ns : {a, b, c}) test::create_runnerset(c_, ns, sim_->ghes_url() + "/acme", 0, 2);
  for (const auto& ns : {a, b}) {
    EXPECT_EQ(wait_field(ns, R"({.status.conditions[?(@.type=="CredentialsReady")].status})", "True"), "True")
        << ns << ": " << manager_->log_tail();
    EXPECT_EQ(wait_field(ns, "{.status.desiredReplicas}", "0"), "0") << ns;
  }
  // Both listed sets are served; the one in c was created at the same time
  // and has neither a status nor Runners.
  EXPECT_EQ(set_field(c, "{.status}"), "");
  EXPECT_EQ(test::kubectl(c_, "-n " + c + " get runners -o name"), "");
  EXPECT_EQ(manager_->log().find(c + "/linux"), std::string::npos) << manager_->log_tail();
}

}  // namespace
}  // namespace octorun
