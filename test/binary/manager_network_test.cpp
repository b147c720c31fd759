// The octorun binary's GitHub traffic through a real proxy (Debian's
// tinyproxy on loopback) and to a GitHub that serves TLS from a private CA:
// the proxy of the manager's environment and a set's own spec.proxy (with
// credentials from a Secret) carry every GitHub call of the job lifecycle
// (REST, scale set, the listener's long poll), NO_PROXY hosts bypass it, and
// the set's CredentialsReady condition says what is wrong in words naming
// the field (a proxy URL that does not parse, a proxy's 407, a certificate
// not trusted, a CA bundle that is not PEM) until the spec fixes it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <numeric>

#include "adapters/http/http_server.hpp"
#include "adapters/tls/certificates.hpp"
#include "test/binary/binary_harness.hpp"
#include "test/binary/binary_test_base.hpp"
#include "test/simulator/simulator.hpp"
#include "test/support/poll.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/tinyproxy.hpp"

namespace octorun {
namespace {

using namespace std::chrono_literals;

const std::string webhook_secret = "network-test-secret";

sim::simulator_options short_polls(std::string tls_pem_file = {}) {
  sim::simulator_options o;
  o.long_poll = 5s;  // several long polls per test pass through the proxy
  o.session_idle_timeout = 4s;
  o.http.tls_pem_file = std::move(tls_pem_file);
  return o;
}

class ManagerNetwork : public test::binary_test_base {
 protected:
  explicit ManagerNetwork(const sim::simulator_options& o = short_polls()) : binary_test_base("mgrn", o) {}

  void SetUp() override {
    if (test::tinyproxy::binary().empty())
      GTEST_SKIP() << "tinyproxy is not installed: scripts/install-deps.sh installs Debian's tinyproxy";
  }

  std::unique_ptr<test::tinyproxy> start_proxy(const test::tinyproxy::options& o = {}) {
    std::string why;
    auto p = test::tinyproxy::start(o, why);
    if (!p) ADD_FAILURE() << why;
    return p;
  }

  // The manager with `env` (NAME=value each) added to its environment; the
  // sets re-read their Secrets and reconcile every 3 s. True once it leads
  // (the simulator then delivers webhooks to it).
  bool start_manager(std::vector<std::string> env) {
    auto args = test::octorun_args(c_.kubeconfig, ns_, "m");
    args.push_back("--resync-seconds=3");
    manager_ = std::make_unique<test::octorun_process>(
        OCTORUN_BINARY, args, webhook_secret, "/tmp/octorun-manager-" + ns_ + ".log", std::move(env));
    auto url = manager_->wait_leading(60s);
    if (url.empty()) return false;
    sim_->set_webhook(url, webhook_secret);
    return true;
  }

  // RunnerSet `name` of organisation acme for runner label `label`, with
  // `intake` and `extra` spec members (JSON, with a leading comma).
  void create_set(const std::string& name, const std::string& label, const std::string& intake,
                  const std::string& extra = "") {
    test::kubectl(c_, "-n " + ns_ + " apply -f - >/dev/null <<'EOF'\n" +
                          R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":")" +
                          name + R"("},"spec":{"scopeURL":")" + sim_->ghes_url() +
                          R"(/acme","credentialsSecretName":"github",)" + R"("intake":")" + intake +
                          R"(","runnerLabels":[")" + label + R"("],"minRunners":0,"maxRunners":3,)" +
                          R"("template":{"spec":{"containers":[{"name":"runner","image":"r"}]}})" + extra +
                          "}}\nEOF");
  }
  void create_credentials() {
    test::kubectl(
        c_,
        "-n " + ns_ + " create secret generic github --from-literal=github_token=ghp_simulator >/dev/null");
  }
  void patch_set(const std::string& name, const std::string& spec_patch) {
    test::kubectl(c_, "-n " + ns_ + " patch rset " + name + " --type=merge -p '{\"spec\":" + spec_patch +
                          "}' >/dev/null");
  }

  // "STATUS MESSAGE" of the set's CredentialsReady condition once `want`
  // appears in it (what it was at the deadline otherwise).
  std::string wait_credentials_ready(const std::string& set, const std::string& want) {
    const std::string path = "{.status.conditions[?(@.type==\"CredentialsReady\")]";
    auto observe = [&] {
      return test::kubectl(
          c_, "-n " + ns_ + " get rset " + set + " -o jsonpath='" + path + ".status} " + path + ".message}'");
    };
    return test::poll(
               observe, [&](const std::string& s) { return s.find(want) != std::string::npos; }, 90s)
        .last;
  }

  std::vector<std::int64_t> queue(const std::string& label, int n) {
    return test::queue_jobs(*sim_, n, 300ms, label);
  }

  // Every request the simulator answered for the manager (REST and the
  // Actions service; not the webhooks it sent).
  std::int64_t github_calls() const {
    std::int64_t n = 0;
    for (const auto& [endpoint, count] : sim_->call_counts())
      if (endpoint.starts_with("rest.") || endpoint.starts_with("scaleset.")) n += count;
    return n;
  }
  std::string counts() const {
    std::string out;
    for (const auto& [endpoint, count] : sim_->call_counts())
      out += endpoint + "=" + std::to_string(count) + " ";
    return out;
  }

  bool nothing_left() {
    return watch_->wait([](const test::namespace_watch& w) { return w.runners() == 0 && w.pods() == 0; },
                        60s) &&
           sim_->wait_until(
               [](const sim::simulator& s) {
                 return s.state_json().find("\"runners\":[]") != std::string::npos;
               },
               30s);
  }
};

TEST_F(ManagerNetwork, EveryGitHubCallOfTheJobLifecycleGoesThroughTheEnvironmentsProxy) {
  auto proxy = start_proxy();
  ASSERT_TRUE(proxy);
  // Upper-case HTTP_PROXY, which libcurl alone would ignore; the simulator is
  // plain HTTP, so tinyproxy sees (and logs) every request, not a tunnel.
  ASSERT_TRUE(start_manager({"HTTP_PROXY=" + proxy->url()})) << manager_->log_tail();
  create_credentials();
  create_set("rest", "rest", "Webhook");
  create_set("listen", "listen", "Listener");
  ASSERT_TRUE(sim_->wait_until(
      [](const sim::simulator& s) {
        for (const auto& ss : s.scale_sets())
          if (!ss.session_id.empty()) return true;
        return false;
      },
      60s))
      << manager_->log_tail();
  auto jobs = queue("rest", 2);
  auto listened = queue("listen", 2);
  jobs.insert(jobs.end(), listened.begin(), listened.end());
  EXPECT_TRUE(test::all_completed(*sim_, jobs, 120s)) << sim_->state_json() << manager_->log_tail();
  EXPECT_TRUE(nothing_left()) << sim_->state_json();
  // A clean stop closes the session (through the proxy too); nothing is in flight after it.
  EXPECT_EQ(manager_->stop(SIGTERM), 0);
  const auto seen = proxy->requests();
  EXPECT_EQ(static_cast<std::int64_t>(seen.size()), github_calls())
      << "simulator: " << counts() << "\nproxy log:\n"
      << proxy->log();
  auto through = [&](const std::string& part) {
    return std::count_if(seen.begin(), seen.end(),
                         [&](const std::string& l) { return l.find(part) != l.npos; });
  };
  EXPECT_GE(through("/api/v3/orgs/acme/actions/runners/generate-jitconfig"), 2) << "REST";
  EXPECT_GE(through("/actions/runner-registration"), 1) << "the Actions service";
  EXPECT_GE(through("/queue/"), 2) << "the listener's long polls";
  EXPECT_GT(sim_->calls("rest.generate_jitconfig"), 0);
  EXPECT_NE(manager_->log().find("GitHub http:// calls go through the proxy " + proxy->url()),
            std::string::npos);
  std::printf("proxied requests: %zu, simulator calls: %lld (%s)\n", seen.size(),
              static_cast<long long>(github_calls()), counts().c_str());
}

TEST_F(ManagerNetwork, NoProxyHostsBypassTheProxy) {
  auto proxy = start_proxy();
  ASSERT_TRUE(proxy);
  ASSERT_TRUE(start_manager({"HTTP_PROXY=" + proxy->url(), "NO_PROXY=example.com,127.0.0.1"}))
      << manager_->log_tail();
  create_credentials();
  create_set("listen", "listen", "Listener");
  auto jobs = queue("listen", 1);
  EXPECT_TRUE(test::all_completed(*sim_, jobs, 120s)) << sim_->state_json() << manager_->log_tail();
  EXPECT_GT(github_calls(), 0);
  EXPECT_TRUE(proxy->requests().empty()) << proxy->log();
}

TEST_F(ManagerNetwork, ASetsOwnProxyWithCredentialsFromASecret) {
  auto proxy = start_proxy({"octorun", "pr0xy-pass"});
  ASSERT_TRUE(proxy);
  ASSERT_TRUE(start_manager({})) << manager_->log_tail();  // no proxy in its environment
  create_credentials();
  // A URL that does not parse: the condition names the field.
  create_set("listen", "listen", "Listener",
             R"(,"proxy":{"http":{"url":"127.0.0.1:)" + std::to_string(proxy->port()) + R"("}})");
  auto bad = wait_credentials_ready("listen", "spec.proxy.http.url");
  EXPECT_NE(bad.find("False spec.proxy.http.url: \"127.0.0.1:" + std::to_string(proxy->port()) +
                     "\" must start with http:// or https://"),
            std::string::npos)
      << bad;
  // Without credentials the proxy refuses: 407, in words. (Waited for by its
  // words, not "407" alone: the proxy's port, in the message before, can hold
  // those digits.)
  patch_set("listen", R"({"proxy":{"http":{"url":")" + proxy->url() + R"("}}})");
  auto refused = wait_credentials_ready("listen", "HTTP 407 Proxy Authentication Required");
  EXPECT_NE(refused.find("False proxy: the proxy answered HTTP 407 Proxy Authentication Required"),
            std::string::npos)
      << refused << manager_->log_tail();
  EXPECT_EQ(github_calls(), 0) << "nothing reached GitHub: " << counts();
  std::printf("CredentialsReady without proxy credentials: %s\n", refused.c_str());
  // With them, every call passes.
  test::kubectl(c_, "-n " + ns_ +
                        " create secret generic proxy-login --from-literal=username=octorun "
                        "--from-literal=password=pr0xy-pass >/dev/null");
  patch_set("listen",
            R"({"proxy":{"http":{"url":")" + proxy->url() + R"(","credentialsSecretName":"proxy-login"}}})");
  auto jobs = queue("listen", 2);
  EXPECT_TRUE(test::all_completed(*sim_, jobs, 120s)) << sim_->state_json() << manager_->log_tail();
  EXPECT_EQ(wait_credentials_ready("listen", "True"), "True ");
  EXPECT_EQ(manager_->stop(SIGTERM), 0);
  const auto refused_requests = proxy->requests().size() - static_cast<std::size_t>(github_calls());
  EXPECT_GE(refused_requests, 1u) << "the 407s";
  EXPECT_GT(github_calls(), 0);
  EXPECT_EQ(manager_->log().find("pr0xy-pass"), std::string::npos) << "no proxy password in the log";
}

// GitHub (Enterprise Server) behind a private CA.
class ManagerPrivateCa : public ManagerNetwork {
 protected:
  static std::string serve_from_private_ca() {
    auto ca = tls::make_ca("octorun-test-private-ca", std::chrono::hours(2));
    auto cert = tls::issue_serving_certificate(
        *ca, {"127.0.0.1", {"localhost"}, {"127.0.0.1"}, std::chrono::hours(2)});
    ca_pem() = ca->certificate;
    char path[] = "/tmp/octorun-private-ca-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    std::ofstream(path) << cert->private_key << cert->certificate;
    return path;
  }
  static std::string& ca_pem() {
    static std::string pem;
    return pem;
  }
  ManagerPrivateCa() : ManagerNetwork(short_polls(pem_file_ = serve_from_private_ca())) {}
  ~ManagerPrivateCa() override { std::remove(pem_file_.c_str()); }
  void SetUp() override {
    if (!http::tls_available())
      GTEST_SKIP() << "civetweb cannot serve TLS here (OpenSSL could not be loaded)";
  }
  static inline std::string pem_file_;
};

TEST_F(ManagerPrivateCa, TheSetsCaBundleIsTrustedForItsGitHubCalls) {
  ASSERT_TRUE(sim_->ghes_url().starts_with("https://"));
  ASSERT_TRUE(start_manager({})) << manager_->log_tail();
  create_credentials();
  create_set("listen", "listen", "Listener");
  // Not trusted: a TLS message, not a generic failure.
  auto untrusted = wait_credentials_ready("listen", "TLS");
  EXPECT_NE(untrusted.find("False TLS: "), std::string::npos) << untrusted << manager_->log_tail();
  EXPECT_NE(untrusted.find("certificate"), std::string::npos) << untrusted;
  EXPECT_NE(untrusted.find("spec.caBundle"), std::string::npos) << "says what to do: " << untrusted;
  std::printf("CredentialsReady without the CA: %s\n", untrusted.c_str());
  // A bundle that is not PEM: named.
  test::kubectl(c_, "-n " + ns_ + " create configmap not-pem --from-literal=ca.crt=hello >/dev/null");
  patch_set("listen", R"({"caBundle":{"configMapKeyRef":{"name":"not-pem","key":"ca.crt"}}})");
  auto not_pem = wait_credentials_ready("listen", "not-pem");
  EXPECT_NE(
      not_pem.find("False spec.caBundle.configMapKeyRef: key \"ca.crt\" of ConfigMap \"not-pem\" holds no "
                   "PEM certificate"),
      std::string::npos)
      << not_pem;
  // The private CA: the job runs.
  const auto ca_file = "/tmp/octorun-private-ca-" + ns_ + ".crt";
  std::ofstream(ca_file) << ca_pem();
  test::kubectl(c_, "-n " + ns_ + " create configmap corp-ca --from-file=ca.crt=" + ca_file + " >/dev/null");
  std::remove(ca_file.c_str());
  patch_set("listen", R"({"caBundle":{"configMapKeyRef":{"name":"corp-ca","key":"ca.crt"}}})");
  auto jobs = queue("listen", 1);
  EXPECT_TRUE(test::all_completed(*sim_, jobs, 120s)) << sim_->state_json() << manager_->log_tail();
  EXPECT_EQ(wait_credentials_ready("listen", "True"), "True ");
}

}  // namespace
}  // namespace octorun
