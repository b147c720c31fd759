// Hostile tenants against RunnerClasses, on the real control plane with the
// octorun binary and two GitHub simulators: GitHub, and a tenant's sink. A
// platform namespace holds a class's credentials; a tenant namespace's sets
// name the class. Each attack must fail and leak nothing: the sink is never
// called (so no credential reaches it), the set says why in ClassAdmitted
// and one Warning Event, and a class narrowed under a running set stops it
// from sending anything (where it still allows the set's server and
// credentials, from sending anything but its idle runners' removal). A class's cap per namespace: the
// admission webhook (in-process, judging against the classes and the namespace's RunnerSets as read from the
// apiserver, as the manager's does) refuses a second set that would pass it, and a cap tightened under two
// running sets stops the younger (docs/runner-classes.md, docs/security.md). A set's own proxy (a tinyproxy
// standing for the tenant's sink) carries none of the manager's calls; the class's proxy (another, demanding
// credentials from the platform's namespace) carries them. A tenant's own credentials and containerMode
// kubernetes runners never share a namespace.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>

#include "adapters/admission/ca_injection.hpp"
#include "adapters/admission/identity.hpp"
#include "adapters/admission/platform_lookup.hpp"
#include "adapters/admission/webhook_configuration.hpp"
#include "adapters/admission/webhook_server.hpp"
#include "adapters/kube/client.hpp"
#include "adapters/kube/config.hpp"
#include "common/base64.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/jwt_testing.hpp"
#include "test/support/poll.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/tinyproxy.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

class HostileTenant : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::install_crds(test::cluster()); }

  HostileTenant() : c_(test::cluster()) {
    for (auto* s : {&github_, &sink_}) {
      auto sim = sim::simulator::start({});
      if (!sim) ADD_FAILURE() << sim.error();
      *s = std::move(*sim);
      (*s)->add_organization("acme");
    }
    platform_ = test::make_namespace(c_, "platform");
    tenant_ = test::make_namespace(c_, "tenant");
    class_ = "hostile-" + tenant_;
  }

  ~HostileTenant() override {
    if (manager_ && !HasFailure()) std::remove(manager_->log_path().c_str());
    manager_.reset();
    // The configurations before their server: a webhook that does not answer refuses.
    if (!configurations_.empty())
      test::kubectl(c_, "delete " + configurations_ + " --ignore-not-found >/dev/null");
    webhook_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    test::kubectl(c_, "delete runnerclass " + class_ + " --ignore-not-found --wait=false >/dev/null 2>&1");
    for (const auto& ns : {tenant_, platform_})
      test::kubectl(c_, "delete namespace " + ns + " --wait=false >/dev/null");
  }

  // The class admits the tenant's namespace on `servers`, with the
  // platform's PAT for GitHub; `extra`: more spec fields; `github`: more
  // spec.github fields (each with a leading comma).
  void apply_class(const std::string& servers, const std::string& extra = "",
                   const std::string& github = "") {
    test::kubectl(c_,
                  "apply -f - >/dev/null <<'EOF'\n"
                  R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerClass","metadata":{"name":")" +
                      class_ +
                      R"("},"spec":{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":")" +
                      tenant_ + R"("}},"github":{"servers":[)" + servers +
                      R"(],"credentialsSecretName":"platform-pat")" + github + "}" + extra + "}}\nEOF");
  }

  // The admission webhooks, in-process as the manager serves them, for the
  // tenant's namespace only (its label): other tests' sets are not judged.
  void start_webhook() {
    char tmpl[] = "/tmp/octorun-class-admission-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    test::kubectl(c_, "label namespace " + tenant_ + " octorun.io/class-test=" + tenant_ + " >/dev/null");
    auto cfg = kube::load_kubeconfig(c_.kubeconfig);
    ASSERT_TRUE(cfg) << cfg.error();
    kube::client api(*cfg);
    admission::webhook_server_options o;
    o.bind_address = "127.0.0.1";
    auto me = admission::own_username(api);
    ASSERT_TRUE(me) << me.error();
    o.policy.runner_creator = *me;  // the manager runs as the test's user
    o.policy.scopes.http_hosts = {"127.0.0.1"};
    o.policy.classes = admission::read_platform(*cfg, {"octorun.io", "v1alpha1", "runnerclasses", false},
                                                {"octorun.io", "v1alpha1", "runnersets", true});
    admission::self_signed_config certs;
    certs.dir = dir_ + "/certs";
    certs.ip_addresses = {"127.0.0.1"};
    auto server = admission::webhook_server::start(o, admission::certificate_source::self_signed(certs));
    ASSERT_TRUE(server) << server.error();
    webhook_ = std::move(*server);
    admission::webhook_configuration_options config;
    config.name = "octorun-" + tenant_;
    config.target.url_base = "https://127.0.0.1:" + std::to_string(webhook_->port());
    config.namespace_selector = {{"octorun.io/class-test", tenant_}};
    const auto mutating = dir_ + "/mutating.json", validating = dir_ + "/validating.json";
    std::ofstream(mutating) << admission::mutating_webhook_configuration(config);
    std::ofstream(validating) << admission::validating_webhook_configuration(config);
    test::kubectl(c_, "create -f " + mutating + " -f " + validating + " >/dev/null");
    configurations_ =
        "mutatingwebhookconfiguration/" + config.name + " validatingwebhookconfiguration/" + config.name;
    auto injected = admission::inject_ca_bundle(api, config.name, webhook_->ca_bundle());
    ASSERT_TRUE(injected) << injected.error();
    // In effect once the apiserver's informer has it: a set naming no
    // organization is refused.
    auto probe = test::poll(
        [&] { return refusal(set_json("probe", "https://github.com"), true); },
        [](const std::string& out) { return out.find("names no organization") != std::string::npos; }, 60s);
    ASSERT_TRUE(probe) << probe.last;
  }

  // `class_github`: more spec.github fields of the class (a leading comma);
  // `extra_args`: more of the manager's arguments.
  void start(const std::string& class_github = "", const std::vector<std::string>& extra_args = {}) {
    test::kubectl(
        c_, "-n " + platform_ +
                " create secret generic platform-pat --from-literal=github_token=ghp_simulator >/dev/null");
    apply_class("\"" + github_->ghes_url() + "\"", "", class_github);
    auto args = test::octorun_args(c_.kubeconfig, tenant_, "classes");
    args.push_back("--platform-namespace=" + platform_);
    args.push_back("--resync-seconds=1");
    // No --allow-sets-without-class from here on: the harness's is dropped.
    std::erase(args, std::string("--allow-sets-without-class"));
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    manager_ = std::make_unique<test::octorun_process>(OCTORUN_BINARY, std::move(args), "s3cret",
                                                       "/tmp/octorun-manager-" + tenant_ + ".log");
    ASSERT_TRUE(manager_->wait_leads(60s)) << manager_->log_tail();
  }

  // A Webhook set of `scope`, minRunners 1 and maxRunners 2, naming the
  // class; `extra`: more spec fields.
  std::string set_json(const std::string& name, const std::string& scope, const std::string& extra = "") {
    return R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" + name +
           R"("},"spec":{"runnerClassName":")" + class_ + R"(","scopeURL":")" + scope +
           R"(","intake":"Webhook","runnerLabels":["linux"],"minRunners":1,"maxRunners":2,)" + extra +
           R"("template":{"spec":{"containers":[{"name":"runner","image":"r:1"}]}}}})";
  }
  void create_set(const std::string& name, const std::string& scope, const std::string& extra = "") {
    test::kubectl(
        c_, "-n " + tenant_ + " create -f - >/dev/null <<'EOF'\n" + set_json(name, scope, extra) + "\nEOF");
  }
  // Why the apiserver refuses to create `json` (or, `dry_run`, to judge it)
  // in the tenant's namespace: kubectl's error; empty when it admits it.
  std::string refusal(const std::string& json, bool dry_run = false) {
    try {
      test::kubectl(c_, "-n " + tenant_ + " create" + (dry_run ? " --dry-run=server" : "") +
                            " -f - 2>&1 <<'EOF'\n" + json + "\nEOF");
      return {};
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  }

  std::string get(const std::string& what) { return test::kubectl(c_, "-n " + tenant_ + " get " + what); }

  // "status|reason|message" of the set's ClassAdmitted condition.
  std::string class_admitted(const std::string& set) {
    const std::string c = "{.status.conditions[?(@.type==\"ClassAdmitted\")]";
    return get("runnerset " + set + " -o jsonpath='" + c + ".status}|" + c + ".reason}|" + c + ".message}'");
  }

  std::string wait_class(const std::string& set, const std::string& status_reason) {
    return test::poll([&] { return class_admitted(set); },
                      [&](const std::string& s) { return s.starts_with(status_reason + "|"); }, 90s)
        .last;
  }

  std::size_t runners_of(const std::string& set) {
    auto names = get("runners -l octorun.io/runnerset=" + set + " -o name");
    return static_cast<std::size_t>(std::count(names.begin(), names.end(), '\n'));
  }

  std::string warnings(const std::string& set) {
    return get("events.events.k8s.io --field-selector regarding.kind=RunnerSet,regarding.name=" + set +
               ",type=Warning -o jsonpath='{range .items[*]}{.reason}|{.note}{\"\\n\"}{end}'");
  }

  std::int64_t sink_calls() const {
    std::int64_t n = 0;
    for (const auto& [endpoint, count] : sink_->call_counts()) n += count;
    return n;
  }

  const test::cluster_info& c_;
  std::unique_ptr<sim::simulator> github_, sink_;
  std::string platform_, tenant_, class_;
  std::string dir_, configurations_;
  std::unique_ptr<admission::webhook_server> webhook_;
  std::unique_ptr<test::octorun_process> manager_;
};

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
  start();
  auto two = set_json("ci", github_->ghes_url() + "/acme");
  const std::string counts = R"("minRunners":1,"maxRunners":2)";
  two.replace(two.find(counts), counts.size(), R"("minRunners":2,"maxRunners":2)");
  test::kubectl(c_, "-n " + tenant_ + " create -f - >/dev/null <<'EOF'\n" + two + "\nEOF");
  ASSERT_TRUE(wait_class("ci", "True|Admitted").starts_with("True|Admitted|")) << manager_->log_tail();
  auto registered = test::poll([&] { return github_->runner_names(); },
                               [](const std::vector<std::string>& r) { return r.size() == 2; }, 60s);
  ASSERT_EQ(registered.last.size(), 2u) << manager_->log_tail();
  const auto busy = registered.last[0], idle = registered.last[1];
  ASSERT_TRUE(github_->set_runner_busy(busy, true));
  test::kubectl(c_, "patch runnerclass " + class_ +
                        R"( --type=merge -p '{"spec":{"namespaceSelector":{"matchLabels":)"
                        R"({"kubernetes.io/metadata.name":"elsewhere"}}}}' >/dev/null)");
  auto got = wait_class("ci", "False|Refused");
  ASSERT_TRUE(got.starts_with("False|Refused|No new runners start; idle ones are removed from GitHub"))
      << got << "\n"
      << manager_->log_tail();
  EXPECT_NE(got.find("does not admit namespace \"" + tenant_ + "\""), std::string::npos) << got;
  github_->reset_counts();
  auto left =
      test::poll([&] { return github_->runner_names(); },
                 [&](const std::vector<std::string>& r) { return r == std::vector<std::string>{busy}; }, 60s);
  EXPECT_EQ(left.last, std::vector<std::string>{busy}) << manager_->log_tail();
  auto runners =
      test::poll([&] { return get("runners -l octorun.io/runnerset=ci -o name"); },
                 [&](const std::string& r) { return r == "runner.octorun.io/" + busy + "\n"; }, 60s);
  EXPECT_EQ(runners.last, "runner.octorun.io/" + busy + "\n") << "the busy runner keeps its job";
  EXPECT_EQ(github_->calls("rest.generate_jitconfig"), 0) << "a refused set registers no runner";
  EXPECT_EQ(github_->calls("rest.list_runs"), 0) << "a refused set sweeps nothing";
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

// A Runner a tenant makes by hand with a set's label and a template of its
// choosing, past admission (no webhook here): the set never registers it on
// GitHub (no JIT configuration, no pod), says why in one Warning Event on
// it, and keeps serving its own. At 1a1baa0 such a Runner registered on
// GitHub with labels the set never declared.
TEST_F(HostileTenant, AHandMadeRunnerGetsNoJitConfigurationFromTheSet) {
  start();
  const auto scope = github_->ghes_url() + "/acme";
  create_set("linux", scope);
  ASSERT_TRUE(wait_class("linux", "True|Admitted").starts_with("True|Admitted|")) << manager_->log_tail();
  ASSERT_TRUE(test::poll([&] { return runners_of("linux"); }, [](std::size_t n) { return n == 1; }, 60s))
      << manager_->log_tail();
  test::kubectl(
      c_, "-n " + tenant_ + " create -f - >/dev/null <<'EOF'\n" +
              R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":"linux-hand1",)"
              R"("labels":{"octorun.io/runnerset":"linux"}},"spec":{"runnerSetName":"linux","scopeURL":")" +
              scope +
              R"(","runnerLabels":["linux","gpu","prod-deploy"],"template":)"
              R"({"spec":{"containers":[{"name":"runner","image":"r:1"}]}}}})"
              "\nEOF");
  auto warned = test::poll(
      [&] {
        return get(
            "events.events.k8s.io --field-selector regarding.kind=Runner,regarding.name=linux-hand1 -o "
            "jsonpath='{range .items[*]}{.type}|{.reason}{\"\\n\"}{end}'");
      },
      [](const std::string& w) { return w.find("Warning|NotMadeByRunnerSet") != std::string::npos; }, 30s);
  EXPECT_NE(warned.last.find("Warning|NotMadeByRunnerSet"), std::string::npos) << warned.last;
  for (const auto& name : github_->runner_names())
    EXPECT_NE(name, "linux-hand1") << "the hand-made Runner was registered on GitHub";
  EXPECT_EQ(get("secret/linux-hand1-jit pod/linux-hand1 -o name 2>/dev/null || true"), "")
      << "a JIT Secret or pod was made for it";
  EXPECT_EQ(runners_of("linux"), 2u) << "its own runner and the hand-made one, which it does not count";
  EXPECT_TRUE(wait_class("linux", "True|Admitted").starts_with("True|Admitted|"));
}

TEST_F(HostileTenant, AdmissionRefusesASecondSetThatPassesTheNamespaceCapNamingIt) {
  apply_class("\"" + github_->ghes_url() + "\"", R"(,"maxRunnersPerNamespace":3)");
  start_webhook();
  const auto scope = github_->ghes_url() + "/acme";
  ASSERT_EQ(refusal(set_json("first", scope)), "");
  // Alone it keeps to the per-set rules; beside the first it passes the cap.
  const auto refused = refusal(set_json("second", scope));
  EXPECT_NE(refused.find("spec.maxRunners: takes the sets of namespace \"" + tenant_ +
                         "\" under RunnerClass \"" + class_ +
                         "\" to 4 runners (2 of them the other sets'), more than the 3 the class allows "
                         "per namespace (spec.maxRunnersPerNamespace)"),
            std::string::npos)
      << refused;
  EXPECT_NE(get("runnersets -o name").find("first"), std::string::npos);
  EXPECT_EQ(get("runnersets -o name").find("second"), std::string::npos) << "the refused set was stored";
}

// A tenant's template that reaches past its pod (privileged, the node's
// filesystem or network, a node of its choosing), a set that asks for more
// runners than any set may, and a Runner made by hand with a set's label:
// each refused at admission, naming the field (and the class where it is
// the class's rule), and nothing stored. On main at 1a1baa0 each was
// admitted (issue 32).
TEST_F(HostileTenant, AdmissionRefusesPodEscapesUnboundedSetsAndHandMadeRunners) {
  apply_class("\"" + github_->ghes_url() + "\"");  // podSecurity: baseline, the default
  start_webhook();
  const auto scope = github_->ghes_url() + "/acme";
  auto with_pod = [&](const std::string& name, const std::string& pod_spec) {
    auto json = set_json(name, scope);
    const std::string plain = R"("spec":{"containers":[{"name":"runner","image":"r:1"}]})";
    json.replace(json.find(plain), plain.size(), R"("spec":)" + pod_spec);
    return json;
  };
  const std::string of_class = "of RunnerClass \"" + class_ + "\"";
  const struct {
    std::string name, pod, field;
  } escapes[] = {
      {"privileged",
       R"({"containers":[{"name":"runner","image":"r:1","securityContext":{"privileged":true}}]})",
       "spec.template.spec.containers[0].securityContext.privileged"},
      {"host-path",
       R"({"containers":[{"name":"runner","image":"r:1"}],"volumes":[{"name":"root","hostPath":{"path":"/"}}]})",
       "spec.template.spec.volumes[0].hostPath"},
      {"host-network", R"({"hostNetwork":true,"containers":[{"name":"runner","image":"r:1"}]})",
       "spec.template.spec.hostNetwork"},
      {"node-name", R"({"nodeName":"control-plane","containers":[{"name":"runner","image":"r:1"}]})",
       "spec.template.spec.nodeName"},
  };
  for (const auto& e : escapes) {
    const auto refused = refusal(with_pod(e.name, e.pod));
    EXPECT_NE(refused.find(e.field), std::string::npos) << e.name << ": " << refused;
    EXPECT_NE(refused.find(of_class), std::string::npos) << e.name << ": " << refused;
  }
  auto unbounded = set_json("unbounded", scope);
  const std::string counts = R"("minRunners":1,"maxRunners":2)";
  unbounded.replace(unbounded.find(counts), counts.size(), R"("minRunners":100000,"maxRunners":100000)");
  const auto too_many = refusal(unbounded);
  EXPECT_NE(too_many.find("spec.minRunners"), std::string::npos) << too_many;
  EXPECT_NE(too_many.find("spec.maxRunners"), std::string::npos) << too_many;
  EXPECT_EQ(get("runnersets -o name"), "") << "a refused set was stored";

  // A Runner by hand, as a tenant RBAC lets past (system:masters): only
  // the manager's user creates Runners.
  ASSERT_EQ(refusal(set_json("linux", scope)), "");
  const auto hand_made =
      R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":"linux-hand1",)"
      R"("labels":{"octorun.io/runnerset":"linux"}},"spec":{"runnerSetName":"linux","scopeURL":")" +
      scope +
      R"(","template":)"
      R"({"spec":{"containers":[{"name":"runner","image":"r:1"}]}}}})";
  std::string made_by_tenant;
  try {
    test::kubectl(c_, "-n " + tenant_ + " create --as=tenant --as-group=system:masters -f - 2>&1 <<'EOF'\n" +
                          hand_made + "\nEOF");
  } catch (const std::runtime_error& e) {
    made_by_tenant = e.what();
  }
  EXPECT_NE(made_by_tenant.find("only the Octorun manager"), std::string::npos) << made_by_tenant;
  EXPECT_EQ(get("runners -o name"), "") << "the hand-made Runner was stored";
}

TEST_F(HostileTenant, ATightenedNamespaceCapStopsTheYoungerSetAndKeepsTheOlder) {
  start();
  const auto server = "\"" + github_->ghes_url() + "\"";
  apply_class(server, R"(,"maxRunnersPerNamespace":4)");
  // Made in this order; within one second of each other their names order
  // them the same way (creationTimestamp, then name).
  create_set("older", github_->ghes_url() + "/acme");
  create_set("younger", github_->ghes_url() + "/acme");
  for (const auto* set : {"older", "younger"}) {
    ASSERT_TRUE(wait_class(set, "True|Admitted").starts_with("True|Admitted|")) << manager_->log_tail();
    ASSERT_TRUE(test::poll([&] { return runners_of(set); }, [](std::size_t n) { return n == 1; }, 60s))
        << set << "\n"
        << manager_->log_tail();
  }
  apply_class(server, R"(,"maxRunnersPerNamespace":2)");  // the platform tightens the class under both
  auto got = wait_class("younger", "False|OverLimits");
  ASSERT_TRUE(got.starts_with("False|OverLimits|")) << got << "\n" << manager_->log_tail();
  EXPECT_NE(got.find("spec.maxRunners: takes the sets of namespace \"" + tenant_ + "\" under RunnerClass \"" +
                     class_ +
                     "\" to 4 runners with the sets older than it, more than the 2 the class allows "
                     "per namespace (spec.maxRunnersPerNamespace)"),
            std::string::npos)
      << got;
  auto warned =
      test::poll([&] { return warnings("younger"); },
                 [](const std::string& w) { return w.find("ClassOverLimits|") != std::string::npos; }, 30s);
  EXPECT_NE(warned.last.find("spec.maxRunnersPerNamespace"), std::string::npos) << warned.last;
  // Its idle runner goes (none runs a job), and none starts in its place.
  EXPECT_TRUE(test::poll([&] { return runners_of("younger"); }, [](std::size_t n) { return n == 0; }, 60s))
      << manager_->log_tail();
  EXPECT_TRUE(wait_class("older", "True|Admitted").starts_with("True|Admitted|"));
  EXPECT_EQ(runners_of("older"), 1u) << "the older set keeps to the cap and keeps its runner";
}

// A kubernetes-mode runner's token may list every Secret of its namespace
// (the runner container hooks need it), so a set's own credentials never
// share a namespace with one: admission refuses the set that would bring
// them together, naming the field and the other set, and a pair written
// past admission (the webhook failing open) is judged at use: the
// kubernetes-mode set, though the older, starts no runner and its idle one
// goes, while the credentials' set runs. On main at 1a1baa0 both were served.
TEST_F(HostileTenant, ATenantsCredentialsNeverShareANamespaceWithKubernetesModeRunners) {
  apply_class("\"" + github_->ghes_url() + "\"", "", R"(,"allowTenantCredentials":true)");
  test::kubectl(c_,
                "-n " + tenant_ +
                    " create secret generic tenant-pat --from-literal=github_token=ghp_tenant >/dev/null");
  start_webhook();
  const auto scope = github_->ghes_url() + "/acme";
  const std::string own = R"("credentialsSecretName":"tenant-pat",)";
  const std::string kube = R"("containerMode":{"type":"kubernetes"},)";
  const auto both = refusal(set_json("both", scope, own + kube));
  EXPECT_NE(both.find("spec.credentialsSecretName: must be left out while spec.containerMode.type is "
                      "kubernetes: a kubernetes-mode runner's token may list and read every Secret of its "
                      "namespace"),
            std::string::npos)
      << both;
  ASSERT_EQ(refusal(set_json("creds", scope, own)), "");
  const auto refused = refusal(set_json("kube", scope, kube));
  EXPECT_NE(refused.find("spec.containerMode.type: must not be kubernetes in namespace \"" + tenant_ +
                         "\": RunnerSet \"creds\" keeps its credentials there (Secret \"tenant-pat\")"),
            std::string::npos)
      << refused;
  EXPECT_EQ(get("runnersets -o name"), "runnerset.octorun.io/creds\n") << "a refused set was stored";

  // Past admission, the kubernetes-mode set first: it runs (the hooks'
  // rights bound from the cluster's view role) until a set's credentials
  // come beside it.
  test::kubectl(c_, "delete " + configurations_ + " >/dev/null");
  configurations_.clear();
  test::kubectl(c_, "-n " + tenant_ + " delete runnerset creds >/dev/null");
  start(R"(,"allowTenantCredentials":true)", {"--runner-kubernetes-mode-cluster-role=view"});
  create_set("kube", scope, kube);
  ASSERT_TRUE(wait_class("kube", "True|Admitted").starts_with("True|Admitted|")) << manager_->log_tail();
  ASSERT_TRUE(test::poll([&] { return runners_of("kube"); }, [](std::size_t n) { return n == 1; }, 60s))
      << manager_->log_tail();
  create_set("creds", scope, own);
  auto got = wait_class("kube", "False|OverLimits");
  ASSERT_TRUE(got.starts_with("False|OverLimits|")) << got << "\n" << manager_->log_tail();
  EXPECT_NE(got.find("spec.containerMode.type: must not be kubernetes in namespace \"" + tenant_ +
                     "\": RunnerSet \"creds\" keeps its credentials there"),
            std::string::npos)
      << got;
  EXPECT_TRUE(test::poll([&] { return runners_of("kube"); }, [](std::size_t n) { return n == 0; }, 60s))
      << "the kubernetes-mode runner stayed beside the tenant's credentials\n"
      << manager_->log_tail();
  ASSERT_TRUE(wait_class("creds", "True|Admitted").starts_with("True|Admitted|")) << manager_->log_tail();
  EXPECT_TRUE(test::poll([&] { return runners_of("creds"); }, [](std::size_t n) { return n == 1; }, 60s))
      << manager_->log_tail();
}

}  // namespace
}  // namespace octorun
