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
//
// A repository's or organisation's hook names no App installation, and
// whoever owns the repository configures its secret: with one secret for
// the platform, every team that configured a hook held the key that signs
// every other team's deliveries. ClassHooks below: each RunnerClass has a
// secret and an intake path of its own, and a delivery on a class's path
// makes demand for that class's sets only.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <sstream>

#include "adapters/github/crypto.hpp"
#include "adapters/http/http_client.hpp"
#include "common/base64.hpp"
#include "common/rfc3339.hpp"
#include "test/binary/binary_harness.hpp"
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
                  const std::string& credentials, const std::string& runner_class = "") {
    const auto class_field =
        runner_class.empty() ? std::string() : R"("runnerClassName":")" + runner_class + "\",";
    test::kubectl(c_, "-n " + ns + " create -f - >/dev/null <<'EOF'\n" +
                          R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" +
                          name + R"("},"spec":{)" + class_field + R"("scopeURL":")" + github_->ghes_url() +
                          "/" + scope + R"(","credentialsSecretName":")" + credentials +
                          R"(","intake":"Webhook","runnerLabels":["linux"],"minRunners":0,"maxRunners":3,)"
                          R"("template":{"spec":{"containers":[{"name":"runner","image":"r"}]}}}})"
                          "\nEOF");
    // The set tells the router its credentials when they load, before it
    // writes CredentialsReady=True.
    test::kubectl(c_, "-n " + ns + " wait --for=condition=CredentialsReady --timeout=60s runnerset/" + name +
                          " >/dev/null");
    ASSERT_EQ(
        test::kubectl(c_, "-n " + ns + " get runnerset " + name +
                              " -o jsonpath='{.status.conditions[?(@.type==\"CredentialsReady\")].status}'"),
        "True")
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

  // POSTs `body`, signed with `key` (the manager's secret), to the intake's
  // path + `suffix` as delivery `id`: "STATUS BODY".
  std::string deliver(const std::string& body, const std::string& id, const std::string& key = secret,
                      const std::string& suffix = "") {
    http::client client;
    client.set_plain_http(true);
    auto r = client.perform({"POST",
                             intake_ + suffix,
                             {{"Content-Type", "application/json"},
                              {"X-GitHub-Event", "workflow_job"},
                              {"X-GitHub-Delivery", id},
                              {"X-Hub-Signature-256", github::webhook_signature(key, body)}},
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

// Tenants A and B each hold a RunnerClass (admitting their own namespace
// only) with a webhook secret of its own, and the secret of their own
// class's hooks. Tenant A signs a `queued` for tenant B's repository with
// class A's secret, as a repository hook of its own would send it, and
// posts it on class A's path: it is taken (the signature is valid) and
// makes no runner anywhere, for no set of class A serves B's repository.
// The same body on class B's path, signed with class B's secret, is B's
// own hook: B's runner. Before, the intake had one secret, the manager's,
// which tenant A held as soon as it configured its repository's hook: the
// same body signed with it on /webhook made a runner in B's namespace (B's
// set being the one that serves acme/b-app), and the class paths did not
// exist (404).
class ClassHooks : public WebhookRouting {
 protected:
  ClassHooks() {
    github_->add_repository("acme/b-app");
    platform_ = test::make_namespace(c_, "wh-platform");
    class_a_ = "hook-a-" + tenant_;
    class_b_ = "hook-b-" + other_;
  }
  ~ClassHooks() override {
    test::kubectl(c_, "delete runnerclass " + class_a_ + " " + class_b_ + " --wait=false >/dev/null 2>&1");
    test::kubectl(c_, "delete namespace " + platform_ + " --wait=false >/dev/null");
  }

  // A class for namespace `ns` on the simulator, tenants' own credentials,
  // and its webhook secret in the platform's Secret `hook`.
  void create_class(const std::string& name, const std::string& ns, const std::string& hook,
                    const std::string& hook_secret) {
    test::kubectl(c_, "-n " + platform_ + " create secret generic " + hook +
                          " --from-literal=secret=" + hook_secret + " >/dev/null");
    test::kubectl(
        c_,
        "create -f - >/dev/null <<'EOF'\n"
        R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerClass","metadata":{"name":")" +
            name + R"("},"spec":{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":")" + ns +
            R"("}},"github":{"servers":[")" + github_->ghes_url() +
            R"("],"allowTenantCredentials":true,"webhookSecretRef":{"name":")" + hook + R"("}}}})" + "\nEOF");
  }

  void start_with_classes() {
    create_class(class_a_, tenant_, "hook-a", "a-s3cret");
    create_class(class_b_, other_, "hook-b", "b-s3cret");
    auto args = test::octorun_args(c_.kubeconfig, tenant_, "class-hooks");
    std::erase(args, "--namespace=" + tenant_);
    args.push_back("--namespaces=" + tenant_ + "," + other_);
    args.push_back("--webhook-sweep-seconds=0");
    args.push_back("--platform-namespace=" + platform_);
    manager_ = std::make_unique<test::octorun_process>(OCTORUN_BINARY, std::move(args), secret,
                                                       "/tmp/octorun-manager-" + tenant_ + ".log");
    intake_ = manager_->wait_leading(60s);
    ASSERT_FALSE(intake_.empty()) << manager_->log_tail();
    // A class's path answers 404 until the manager has read its Secret,
    // then 401 to a delivery signed with another key.
    for (const auto& c : {class_a_, class_b_})
      ASSERT_TRUE(test::poll([&] { return deliver("{}", "path-known-" + c, "not-the-key", "/classes/" + c); },
                             [](const std::string& answer) { return answer.starts_with("401 "); }, 60s)
                      .met)
          << manager_->log_tail();
  }

  // A workflow_job body of a repository's hook: `repository` on the
  // simulator, no installation, queued now.
  std::string hook_body(std::int64_t job, const std::string& repository) const {
    const auto now = static_cast<std::int64_t>(std::time(nullptr));
    return R"({"action":"queued","workflow_job":{"id":)" + std::to_string(job) + R"(,"run_id":)" +
           std::to_string(job + 1'000'000) +
           R"(,"labels":["self-hosted","linux"],"name":"build","workflow_name":"CI","head_branch":"main",)"
           R"("status":"queued","created_at":")" +
           format_rfc3339(now) + R"(","runner_id":null,"runner_name":null},"repository":{"id":2,"name":")" +
           repository.substr(repository.find('/') + 1) + R"(","full_name":")" + repository +
           R"(","html_url":")" + github_->ghes_url() + "/" + repository +
           R"(","owner":{"login":"acme"}},"organization":{"login":"acme"},"sender":{"login":"octocat"}})";
  }

  std::string platform_, class_a_, class_b_;
};

TEST_F(ClassHooks, AClassesSecretMakesNoRunnerForAnotherClassesTenant) {
  start_with_classes();
  secret_of(tenant_, "pat", R"("github_token":")" + base64_encode("ghp_simulator") + "\"");
  secret_of(other_, "pat", R"("github_token":")" + base64_encode("ghp_simulator") + "\"");
  create_set(other_, "b-app", "acme/b-app", "pat", class_b_);
  create_set(tenant_, "app", "acme/app", "pat", class_a_);

  const auto forged = hook_body(9201, "acme/b-app");
  auto taken = deliver(forged, "class-1", "a-s3cret", "/classes/" + class_a_);
  EXPECT_TRUE(taken.starts_with("202 ")) << taken << manager_->log_tail();
  // The router turns it away (counted): then nothing can come of it.
  const auto metrics = manager_->wait_metrics(10s);
  EXPECT_TRUE(test::poll(
                  [&] {
                    return test::scrape_metric(metrics, "octorun_rejected_input_total",
                                               {"source=\"webhook\"", "reason=\"unserved_repository\""});
                  },
                  [](const std::string& count) { return !count.empty() && count != "0"; }, 60s)
                  .met)
      << manager_->log_tail();
  EXPECT_TRUE(runners(other_).empty()) << "class A's secret made tenant B a runner";
  EXPECT_TRUE(runners(tenant_).empty());
  auto crossed = deliver(forged, "class-2", "a-s3cret", "/classes/" + class_b_);
  EXPECT_TRUE(crossed.starts_with("401 ")) << "class A's secret on class B's path: " << crossed;
  auto unknown = deliver(forged, "class-3", "a-s3cret", "/classes/no-such-class");
  EXPECT_TRUE(unknown.starts_with("404 ")) << unknown;

  // B's own hook: the same body on B's class's path, signed with its secret.
  auto genuine = deliver(forged, "class-4", "b-s3cret", "/classes/" + class_b_);
  EXPECT_TRUE(genuine.starts_with("202 ")) << genuine;
  auto made = test::poll([&] { return runners(other_); }, [](const auto& r) { return !r.empty(); }, 60s).last;
  EXPECT_EQ(made.size(), 1u) << "tenant B's own delivery made no runner\n" << manager_->log_tail();
  EXPECT_TRUE(runners(tenant_).empty());
}

}  // namespace
}  // namespace octorun
