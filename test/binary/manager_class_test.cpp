// Hostile tenants against RunnerClasses (hostile_tenant_fixture.hpp): where
// a set's calls and credentials go. Each attack must fail and leak nothing:
// the sink is never called (so no credential reaches it), the set says why
// in ClassAdmitted and one Warning Event, and a class narrowed under a
// running set stops it from sending anything (where it still allows the
// set's server and credentials, from sending anything but its idle runners'
// removal). A set's own proxy (a tinyproxy standing for the tenant's sink)
// carries none of the manager's calls; the class's proxy (another,
// demanding credentials from the platform's namespace) carries them.
#include <gtest/gtest.h>

#include "common/base64.hpp"
#include "test/binary/hostile_tenant_fixture.hpp"
#include "test/support/jwt_testing.hpp"
#include "test/support/tinyproxy.hpp"

namespace octorun {
namespace {

using test::HostileTenant;
using namespace std::chrono_literals;

TEST_F(HostileTenant, ASetPointedAtItsOwnSinkSendsNothingThereAndSaysWhy) {
  start();
  // The tenant's own proxy and CA would have carried the manager's calls
  // before classes; under a class they shape its pods only.
  create_set("exfil", sink_->ghes_url() + "/acme");
  create_set("honest", github_->ghes_url() + "/acme");
  auto got = wait_class("exfil", "False|Refused");
  ASSERT_TRUE(got.starts_with("False|Refused|")) << got << "\n" << manager_->log_tail();
  EXPECT_NE(got.find("spec.scopeURL: \"" + sink_->ghes_url() +
                     "/acme\" is not on a GitHub server RunnerClass \"" + class_ + "\" allows"),
            std::string::npos)
      << got;
  auto honest = wait_class("honest", "True|Admitted");
  ASSERT_TRUE(honest.starts_with("True|Admitted|")) << honest << "\n" << manager_->log_tail();
  // The honest set runs on the platform's credentials, read from the platform's namespace.
  auto runners = test::poll([&] { return get("runners -l octorun.io/runnerset=honest -o name"); },
                            [](const std::string& r) { return !r.empty(); }, 60s);
  EXPECT_FALSE(runners.last.empty()) << manager_->log_tail();
  auto warned =
      test::poll([&] { return warnings("exfil"); },
                 [](const std::string& w) { return w.find("ClassRefused|") != std::string::npos; }, 30s);
  EXPECT_NE(warned.last.find("ClassRefused|Nothing is sent to GitHub for this set"), std::string::npos)
      << warned.last;
  EXPECT_TRUE(get("runners -l octorun.io/runnerset=exfil -o name").empty()) << "a refused set starts nothing";
  EXPECT_EQ(sink_calls(), 0) << "a credential reached the tenant's sink";
}

// The same with a GitHub App's key of the tenant's own, which the class
// allows: a JWT minted from it would let the sink mint tokens for every
// installation of the App. At 1a1baa0 the sink received the App's JWT at
// /app/installations/42/access_tokens.
TEST_F(HostileTenant, ATenantsAppKeyNeverSignsARequestToItsSink) {
  start(R"(,"allowTenantCredentials":true)");
  const auto& key = github::testing::shared_app_key();
  sink_->add_app({7, "Iv1.tenant", key.public_key});
  sink_->add_app_installation(7, 42, "acme");
  test::kubectl(c_, "-n " + tenant_ + " create -f - >/dev/null <<'EOF'\n" +
                        R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"tenant-app"},"data":{)"
                        R"("github_app_id":")" +
                        base64_encode("7") + R"(","github_app_installation_id":")" + base64_encode("42") +
                        R"(","github_app_private_key":")" + base64_encode(key.private_key) + R"("}})" +
                        "\nEOF");
  create_set("exfil", sink_->ghes_url() + "/acme", R"("credentialsSecretName":"tenant-app",)");
  auto got = wait_class("exfil", "False|Refused");
  ASSERT_TRUE(got.starts_with("False|Refused|")) << got << "\n" << manager_->log_tail();
  EXPECT_NE(got.find("is not on a GitHub server RunnerClass"), std::string::npos) << got;
  // The class's own set runs: the manager is not idle while the sink waits.
  create_set("honest", github_->ghes_url() + "/acme");
  ASSERT_TRUE(test::poll([&] { return runners_of("honest"); }, [](std::size_t n) { return n == 1; }, 60s))
      << manager_->log_tail();
  EXPECT_EQ(sink_calls(), 0) << "a request signed with the tenant's App key reached its sink";
  EXPECT_EQ(runners_of("exfil"), 0u);
}

TEST_F(HostileTenant, ASetsOwnProxyNeverCarriesTheManagersCallsTheClassesProxyDoes) {
  if (test::tinyproxy::binary().empty())
    GTEST_SKIP() << "tinyproxy is not installed: scripts/install-deps.sh installs Debian's tinyproxy";
  // The platform's egress proxy demands credentials, from a Secret in the
  // platform's namespace; the tenant's own proxy is a sink that logs
  // whatever reaches it. GitHub is plain http here, so a proxied call is a
  // whole request, its Authorization header included, in the proxy's hands.
  std::string why;
  auto egress = test::tinyproxy::start({"octorun", "egress-pass"}, why);
  ASSERT_TRUE(egress) << why;
  auto tenant_proxy = test::tinyproxy::start({}, why);
  ASSERT_TRUE(tenant_proxy) << why;
  test::kubectl(c_, "-n " + platform_ +
                        " create secret generic egress-login --from-literal=username=octorun "
                        "--from-literal=password=egress-pass >/dev/null");
  start(R"(,"proxy":{"url":")" + egress->url() + R"(","credentialsSecretName":"egress-login"})");
  create_set("ci", github_->ghes_url() + "/acme",
             R"("proxy":{"http":{"url":")" + tenant_proxy->url() + R"("},"https":{"url":")" +
                 tenant_proxy->url() + R"("}},)");
  auto admitted = wait_class("ci", "True|Admitted");
  ASSERT_TRUE(admitted.starts_with("True|Admitted|")) << admitted << "\n" << manager_->log_tail();
  // Its runner gets a JIT configuration: the manager's calls went out.
  ASSERT_TRUE(test::poll([&] { return runners_of("ci"); }, [](std::size_t n) { return n == 1; }, 60s))
      << manager_->log_tail();
  ASSERT_TRUE(test::poll([&] { return github_->calls("rest.generate_jitconfig"); },
                         [](std::int64_t n) { return n > 0; }, 60s))
      << manager_->log_tail();
  EXPECT_TRUE(tenant_proxy->requests().empty())
      << "the manager's calls, with their credentials, went through the tenant's proxy:\n"
      << tenant_proxy->log();
  const auto through_egress = egress->requests();
  const auto jit = std::count_if(through_egress.begin(), through_egress.end(), [](const std::string& line) {
    return line.find("/api/v3/orgs/acme/actions/runners/generate-jitconfig") != std::string::npos;
  });
  EXPECT_GE(jit, 1) << "the class's proxy carries the manager's calls:\n" << egress->log();
  EXPECT_NE(manager_->log().find("(through the proxy " + egress->url() + " of RunnerClass " + class_ + ")"),
            std::string::npos)
      << "the log says which proxy the set's calls take";
  EXPECT_EQ(manager_->log().find("egress-pass"), std::string::npos) << "no proxy password in the log";
}

TEST_F(HostileTenant, AClassNarrowedUnderARunningSetStopsItsCalls) {
  start();
  create_set("ci", github_->ghes_url() + "/acme");
  ASSERT_TRUE(wait_class("ci", "True|Admitted").starts_with("True|Admitted|")) << manager_->log_tail();
  ASSERT_FALSE(test::poll([&] { return get("runners -l octorun.io/runnerset=ci -o name"); },
                          [](const std::string& r) { return !r.empty(); }, 60s)
                   .last.empty());
  apply_class("\"https://github.com\"");
  auto got = wait_class("ci", "False|Refused");
  ASSERT_TRUE(got.starts_with("False|Refused|")) << got << "\n" << manager_->log_tail();
  // Once refused, the set calls GitHub no more: none of its next three
  // resyncs (one a second) may (a check that something does not happen
  // needs a window).
  github_->reset_counts();
  const auto before = std::chrono::steady_clock::now();
  test::poll([&] { return std::chrono::steady_clock::now() - before; },
             [](auto waited) { return waited > 3s; }, 10s);
  std::int64_t calls = 0;
  for (const auto& [endpoint, count] : github_->call_counts()) calls += count;
  EXPECT_EQ(calls, 0) << "the refused set still calls GitHub";
}

// A class that stops admitting a running set's namespace, but still allows
// its server and credentials, drains it: its idle runner is removed from
// GitHub and goes, a busy one (GitHub refuses its removal) stays, and no
// runner is registered for it any more. Before, such a set kept its idle
// runners registered, each free to take one more job of the scope the
// platform withdrew.
TEST_F(HostileTenant, AClassThatNoLongerAdmitsTheNamespaceDrainsItsIdleRunners) {
  drains_its_idle_runners_once_withdrawn("Webhook");
  EXPECT_EQ(github_->calls("rest.list_runs"), 0) << "a refused set sweeps nothing";
}

// The same under the Listener intake: its listener stops (its session
// goes), its scale set stays, its idle runner goes through the scale set's
// client.
TEST_F(HostileTenant, AClassThatNoLongerAdmitsTheNamespaceDrainsAListenerSet) {
  drains_its_idle_runners_once_withdrawn("Listener");
  EXPECT_FALSE(github_->session_open("ci")) << "a refused set takes no more jobs";
  EXPECT_EQ(github_->scale_sets().size(), 1u) << "its scale set stays for when it is admitted again";
}

// A set served without a class (--allow-sets-without-class, for upgrades)
// and written past the webhook may name a plain-http scope the platform
// never listed (--github-http-hosts lists 127.0.0.1, not localhost): its
// own check of the scope before any credential goes out refuses it and
// says why, and the sink behind that name is never called.
TEST_F(HostileTenant, APlainHttpScopeThePlatformDidNotListGetsNoCredentials) {
  start("", {"--allow-sets-without-class"});
  test::kubectl(c_,
                "-n " + tenant_ +
                    " create secret generic tenant-pat --from-literal=github_token=ghp_tenant >/dev/null");
  const auto scope = "http://localhost:" + std::to_string(sink_->port()) + "/acme";
  test::kubectl(c_,
                "-n " + tenant_ + " create -f - >/dev/null <<'EOF'\n" +
                    R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":"exfil"},)"
                    R"("spec":{"scopeURL":")" +
                    scope +
                    R"(","credentialsSecretName":"tenant-pat","intake":"Webhook","runnerLabels":["linux"],)"
                    R"("minRunners":1,"maxRunners":2,)"
                    R"("template":{"spec":{"containers":[{"name":"runner","image":"r:1"}]}}}})"
                    "\nEOF");
  const std::string c = "{.status.conditions[?(@.type==\"CredentialsReady\")]";
  auto got =
      test::poll([&] { return get("runnerset exfil -o jsonpath='" + c + ".status}|" + c + ".message}'"); },
                 [](const std::string& s) { return s.starts_with("False|"); }, 60s);
  EXPECT_NE(got.last.find("spec.scopeURL: \"" + scope + "\""), std::string::npos) << got.last << "\n"
                                                                                  << manager_->log_tail();
  EXPECT_NE(got.last.find("--github-http-hosts"), std::string::npos) << got.last;
  EXPECT_EQ(sink_calls(), 0) << "a credential reached the sink";
  EXPECT_EQ(runners_of("exfil"), 0u);
}

// The CRD's schema bounds a set's counts where no webhook answers (none is
// configured for this namespace): the API server itself refuses 100,000.
TEST_F(HostileTenant, TheSchemaBoundsRunnerCountsWithoutTheWebhook) {
  auto unbounded = set_json("unbounded", github_->ghes_url() + "/acme");
  const std::string counts = R"("minRunners":1,"maxRunners":2)";
  unbounded.replace(unbounded.find(counts), counts.size(),
                    R"("minRunners":100000,"maxRunners":100000,"replicas":100000)");
  const auto refused = refusal(unbounded);
  for (const auto* field : {"spec.minRunners", "spec.maxRunners", "spec.replicas"})
    EXPECT_NE(refused.find(std::string(field) + ": Invalid value: 100000: " + field +
                           " in body should be less than or equal to 10000"),
              std::string::npos)
        << field << ": " << refused;
  EXPECT_EQ(get("runnersets -o name"), "") << "a set past the schema's bound was stored";
}

// A set's scope never changes under its runners, whatever its intake: the
// API server refuses the edit with no webhook (before, a Webhook set's
// removals then went to the new scope, where GitHub answers 404 for its
// runners, busy ones included, which the manager took as gone).
TEST_F(HostileTenant, TheSchemaKeepsASetsScopeWithoutTheWebhook) {
  create_set("ci", github_->ghes_url() + "/acme");
  std::string refused;
  try {
    test::kubectl(
        c_,
        "-n " + tenant_ +
            R"( patch runnerset ci --type=merge -p '{"spec":{"scopeURL":"https://github.com/other"}}' 2>&1)");
  } catch (const std::runtime_error& e) {
    refused = e.what();
  }
  EXPECT_NE(refused.find("spec.scopeURL is immutable"), std::string::npos) << refused;
  EXPECT_EQ(get("runnerset ci -o jsonpath='{.spec.scopeURL}'"), github_->ghes_url() + "/acme");
}

}  // namespace
}  // namespace octorun
