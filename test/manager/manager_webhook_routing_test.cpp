// Hostile tenants and webhook demand (issue 32), on the real control plane
// with the octorun binary and the GitHub simulator. Tenant A runs a Webhook
// set for acme/app on its GitHub App's installation; tenant B, whose
// namespace sorts first, declares sets that claim the same repository: one
// with the broader organisation scope on a PAT, one on another App's
// installation. Deliveries are signed with the manager's secret, as GitHub
// signs them (the simulator queues no job: only these deliveries bring
// demand).
//
// Before, demand went to the first set by namespace/name whose scope served
// the repository (tenant B's), and a signed body sent again under a new
// X-GitHub-Delivery id counted again once its job was forgotten.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <regex>
#include <sstream>

#include "adapters/github/crypto.hpp"
#include "adapters/http/http_client.hpp"
#include "common/base64.hpp"
#include "common/rfc3339.hpp"
#include "test/manager/binary_harness.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/jwt_testing.hpp"
#include "test/support/poll.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

const github::testing::rsa_key_pem& app_key() { return github::testing::shared_app_key(); }

constexpr std::int64_t tenant_app = 4242, tenant_installation = 77;
constexpr std::int64_t other_app = 4343, other_installation = 88;
const std::string secret = "s3cret";

class WebhookRouting : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::install_crds(test::cluster()); }

  WebhookRouting() : c_(test::cluster()) {
    auto sim = sim::simulator::start({});
    if (!sim) ADD_FAILURE() << sim.error();
    github_ = std::move(*sim);
    github_->add_organization("acme");
    github_->add_repository("acme/app");
    github_->add_app({tenant_app, "Iv1.tenant", app_key().public_key});
    github_->add_app({other_app, "Iv1.other", app_key().public_key});
    github_->add_app_installation(tenant_app, tenant_installation, "acme");
    github_->add_app_installation(other_app, other_installation, "acme");
    // "wh-other-…" sorts before "wh-tenant-…": tenant B's sets come first by name.
    tenant_ = test::make_namespace(c_, "wh-tenant");
    other_ = test::make_namespace(c_, "wh-other");
  }

  ~WebhookRouting() override {
    if (manager_ && !HasFailure()) std::remove(manager_->log_path().c_str());
    manager_.reset();
    for (const auto& ns : {tenant_, other_})
      test::kubectl(c_, "delete namespace " + ns + " --wait=false >/dev/null");
  }

  // The manager over both namespaces; sweeps only when a set's credentials
  // load (before any delivery here), so demand is what the deliveries bring.
  void start() {
    auto args = test::octorun_args(c_.kubeconfig, tenant_, "routing");
    std::erase(args, "--namespace=" + tenant_);
    args.push_back("--namespaces=" + tenant_ + "," + other_);
    args.push_back("--webhook-sweep-seconds=0");
    manager_ = std::make_unique<test::octorun_process>(OCTORUN_BINARY, std::move(args), secret,
                                                       "/tmp/octorun-manager-" + tenant_ + ".log");
    intake_ = manager_->wait_leading(60s);
    ASSERT_FALSE(intake_.empty()) << manager_->log_tail();
  }

  void secret_of(const std::string& ns, const std::string& name, const std::string& data) {
    test::kubectl(c_, "-n " + ns + " create -f - >/dev/null <<'EOF'\n" +
                          R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":")" + name +
                          R"("},"data":{)" + data + "}}\nEOF");
  }
  void app_secret(const std::string& ns, const std::string& name, std::int64_t app,
                  std::int64_t installation) {
    secret_of(ns, name,
              R"("github_app_id":")" + base64_encode(std::to_string(app)) +
                  R"(","github_app_installation_id":")" + base64_encode(std::to_string(installation)) +
                  R"(","github_app_private_key":")" + base64_encode(app_key().private_key) + "\"");
  }

  // A Webhook set (runner label "linux", minRunners 0) of `scope` under the
  // simulator, on the credentials Secret `credentials`; waits until its
  // credentials load (the router knows them from then on).
  void create_set(const std::string& ns, const std::string& name, const std::string& scope,
                  const std::string& credentials) {
    test::kubectl(c_, "-n " + ns + " create -f - >/dev/null <<'EOF'\n" +
                          R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" +
                          name + R"("},"spec":{"scopeURL":")" + github_->ghes_url() + "/" + scope +
                          R"(","credentialsSecretName":")" + credentials +
                          R"(","intake":"Webhook","runnerLabels":["linux"],"minRunners":0,"maxRunners":3,)"
                          R"("template":{"spec":{"containers":[{"name":"runner","image":"r"}]}}}})"
                          "\nEOF");
    ASSERT_FALSE(
        manager_
            ->wait_for_log(std::regex("(runnerset " + ns + "/" + name + ": GitHub credentials loaded)"), 60s)
            .empty())
        << manager_->log_tail();
  }

  // Tenant A's set "app" on its App, tenant B's "org" (all of acme, a PAT)
  // and "other-app" (acme/app, another App's installation).
  void create_sets() {
    app_secret(tenant_, "app", tenant_app, tenant_installation);
    secret_of(other_, "pat", R"("github_token":")" + base64_encode("ghp_simulator") + "\"");
    app_secret(other_, "other-app", other_app, other_installation);
    create_set(other_, "org", "acme", "pat");
    create_set(other_, "other-app", "acme/app", "other-app");
    create_set(tenant_, "app", "acme/app", "app");
  }

  // A workflow_job body as tenant A's App gets it: acme/app on the simulator,
  // installation 77, queued `queued_at` (seconds since the epoch).
  std::string queued_body(std::int64_t job, std::int64_t queued_at) const {
    return R"({"action":"queued","workflow_job":{"id":)" + std::to_string(job) + R"(,"run_id":)" +
           std::to_string(job + 1'000'000) +
           R"(,"labels":["self-hosted","linux"],"name":"build","workflow_name":"CI","head_branch":"main",)"
           R"("status":"queued","created_at":")" +
           format_rfc3339(queued_at) +
           R"(","runner_id":null,"runner_name":null},"repository":{"id":1,"name":"app","full_name":"acme/app",)"
           R"("html_url":")" +
           github_->ghes_url() +
           R"(/acme/app","owner":{"login":"acme"}},"organization":{"login":"acme"},)"
           R"("installation":{"id":)" +
           std::to_string(tenant_installation) + R"(,"node_id":"MDIz"},"sender":{"login":"octocat"}})";
  }

  // POSTs `body`, signed with the manager's secret, as delivery `id`: "STATUS BODY".
  std::string deliver(const std::string& body, const std::string& id) {
    http::client client;
    client.set_plain_http(true);
    auto r = client.perform({"POST",
                             intake_,
                             {{"Content-Type", "application/json"},
                              {"X-GitHub-Event", "workflow_job"},
                              {"X-GitHub-Delivery", id},
                              {"X-Hub-Signature-256", github::webhook_signature(secret, body)}},
                             body});
    if (!r) return "no answer: " + r.error().message;
    return std::to_string(r->status) + " " + r->body;
  }

  std::vector<std::string> runners(const std::string& ns) {
    std::istringstream names(test::kubectl(c_, "-n " + ns + " get runners -o name"));
    std::vector<std::string> out;
    for (std::string line; std::getline(names, line);)
      if (!line.empty()) out.push_back(line);
    return out;
  }

  // Tenant A's Runners once there are `n` (what there are after a minute if not).
  std::vector<std::string> wait_tenant_runners(std::size_t n) {
    return test::poll([&] { return runners(tenant_); }, [&](const auto& r) { return r.size() >= n; }, 60s)
        .last;
  }

  const test::cluster_info& c_;
  std::unique_ptr<sim::simulator> github_;
  std::string tenant_, other_, intake_;
  std::unique_ptr<test::octorun_process> manager_;
};

TEST_F(WebhookRouting, AnAppsDeliveryMakesNoRunnerForAnotherTenantsBroaderScopeOrCredentials) {
  start();
  create_sets();
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  EXPECT_TRUE(deliver(queued_body(9001, now), "routing-1").starts_with("202 ")) << manager_->log_tail();
  EXPECT_EQ(wait_tenant_runners(1).size(), 1u) << "tenant A's set got no runner\n" << manager_->log_tail();
  EXPECT_TRUE(runners(other_).empty())
      << "tenant B's set (all of acme on a PAT, or another App's installation) took tenant A's job";
}

TEST_F(WebhookRouting, TheSameSignedBodyUnderANewDeliveryIdMakesNoExtraRunner) {
  start();
  create_sets();
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  const auto first = queued_body(9101, now);
  EXPECT_TRUE(deliver(first, "replay-1").starts_with("202 "));
  ASSERT_EQ(wait_tenant_runners(1).size(), 1u) << manager_->log_tail();
  // Captured and sent again under new delivery ids: at once, and a body
  // captured two days ago (its job long forgotten by the set).
  auto again = deliver(first, "replay-2");
  EXPECT_TRUE(again.starts_with("200 ")) << again;
  EXPECT_NE(again.find("replayed body"), std::string::npos) << again;
  auto captured = deliver(queued_body(9102, now - 2 * 24 * 3600), "replay-3");
  EXPECT_TRUE(captured.starts_with("200 ")) << captured;
  EXPECT_NE(captured.find("replayed body"), std::string::npos) << captured;
  // A new job after them: its runner is made once theirs would have been
  // (each set handles its job messages in order).
  EXPECT_TRUE(deliver(queued_body(9103, now), "replay-4").starts_with("202 "));
  auto made = wait_tenant_runners(2);
  ASSERT_EQ(made.size(), 2u) << manager_->log_tail();
  EXPECT_EQ(runners(tenant_).size(), 2u) << "a replayed body made a runner";
  EXPECT_TRUE(runners(other_).empty());
}

}  // namespace
}  // namespace octorun
