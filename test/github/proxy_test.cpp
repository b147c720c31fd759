// The GitHub clients through a real proxy (Debian's tinyproxy on loopback)
// to the simulator: the explicit proxy choice (call_options::proxy) is
// followed, NO_PROXY hosts bypass it, a proxy that wants credentials refuses
// calls without them with a message that says so, and a server whose CA is
// not trusted fails with a TLS message (no retries) that clears once the
// CA is trusted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "adapters/github/rest_client.hpp"
#include "adapters/tls/certificates.hpp"
#include "test/github/sim_fixture.hpp"
#include "test/support/tinyproxy.hpp"

namespace octorun::github {
namespace {

using testing::fast_calls;
using testing::sleep_log;

struct GitHubThroughProxy : ::testing::Test {
  std::unique_ptr<sim::simulator> sim = testing::start_simulator();
  std::shared_ptr<sleep_log> sleeps = std::make_shared<sleep_log>();

  std::unique_ptr<test::tinyproxy> start_proxy(const test::tinyproxy::options& o = {}) {
    std::string why;
    auto p = test::tinyproxy::start(o, why);
    if (!p) ADD_FAILURE() << why;
    return p;
  }

  rest_client client(const call_options& opts) {
    return rest_client(rest_options{
        sim->api_url(), {scope_kind::organization, "octo", {}}, pat_auth("ghp_simulator"), opts});
  }

  void SetUp() override {
    if (test::tinyproxy::binary().empty())
      GTEST_SKIP() << "tinyproxy is not installed: scripts/install-deps.sh installs Debian's tinyproxy";
  }
};

TEST_F(GitHubThroughProxy, EveryCallPassesThroughTheProxy) {
  auto proxy = start_proxy();
  ASSERT_TRUE(proxy);
  auto opts = fast_calls(sleeps);
  opts.proxy = http::proxy_options{};
  opts.proxy->http = http::proxy_endpoint{proxy->url(), {}, {}};
  auto rest = client(opts);
  ASSERT_TRUE(rest.registration_token());
  ASSERT_TRUE(rest.list_runners());
  ASSERT_TRUE(rest.remove_token());
  const auto seen = proxy->requests();
  ASSERT_EQ(seen.size(), 3u) << proxy->log();
  EXPECT_EQ(seen[0], "POST " + sim->api_url() + "/orgs/octo/actions/runners/registration-token HTTP/1.1");
  EXPECT_EQ(static_cast<std::int64_t>(seen.size()), sim->calls("rest.registration_token") +
                                                        sim->calls("rest.list_runners") +
                                                        sim->calls("rest.remove_token"));
}

TEST_F(GitHubThroughProxy, NoProxyHostsGoDirect) {
  auto proxy = start_proxy();
  ASSERT_TRUE(proxy);
  auto opts = fast_calls(sleeps);
  opts.proxy = http::proxy_options{};
  opts.proxy->http = http::proxy_endpoint{proxy->url(), {}, {}};
  opts.proxy->no_proxy = "example.com,127.0.0.1";
  auto token = client(opts).registration_token();
  ASSERT_TRUE(token) << token.error().describe();
  EXPECT_TRUE(proxy->requests().empty()) << proxy->log();
  EXPECT_EQ(sim->calls("rest.registration_token"), 1);
}

TEST_F(GitHubThroughProxy, AProxyWithCredentialsRefusesCallsWithoutThem) {
  auto proxy = start_proxy({"octo", "pr0xy-pass"});
  ASSERT_TRUE(proxy);
  auto opts = fast_calls(sleeps);
  opts.health = std::make_shared<connection_health>();
  opts.proxy = http::proxy_options{};
  opts.proxy->http = http::proxy_endpoint{proxy->url(), {}, {}};
  auto refused = client(opts).registration_token();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, error_kind::transport);
  EXPECT_NE(refused.error().message.find("407 Proxy Authentication Required"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(opts.health->problem(), refused.error().message);
  EXPECT_EQ(sim->calls("rest.registration_token"), 0) << "nothing reached GitHub";
  EXPECT_TRUE(sleeps->get().empty()) << "a refusal is not retried";

  opts.proxy->http->username = "octo";
  opts.proxy->http->password = "pr0xy-pass";
  auto token = client(opts).registration_token();
  ASSERT_TRUE(token) << token.error().describe();
  EXPECT_EQ(sim->calls("rest.registration_token"), 1);
  EXPECT_EQ(opts.health->problem(), "") << "a response clears the problem";
  EXPECT_EQ(proxy->requests().size(), 2u) << proxy->log();
}

// The simulator serving TLS with a certificate from a new private CA; that CA.
std::string serve_tls(std::unique_ptr<sim::simulator>& sim) {
  auto ca = tls::make_ca("private-ca", std::chrono::hours(1));
  auto cert =
      tls::issue_serving_certificate(*ca, {"127.0.0.1", {"localhost"}, {"127.0.0.1"}, std::chrono::hours(1)});
  if (!cert) ADD_FAILURE() << cert.error();
  char path[] = "/tmp/octorun-proxy-tls-XXXXXX";
  close(mkstemp(path));
  std::ofstream(path) << cert->private_key << cert->certificate;
  sim::simulator_options so;
  so.http.tls_pem_file = path;
  sim = testing::start_simulator(so);
  std::remove(path);
  return ca->certificate;
}

TEST_F(GitHubThroughProxy, ATunnelRefusedForWantOfCredentialsSaysSo) {
  serve_tls(sim);
  ASSERT_TRUE(sim);
  auto proxy = start_proxy({"octo", "pr0xy-pass"});
  ASSERT_TRUE(proxy);
  auto opts = fast_calls(sleeps);
  opts.proxy = http::proxy_options{};
  opts.proxy->https = http::proxy_endpoint{proxy->url(), {}, {}};
  auto refused = client(opts).registration_token();
  ASSERT_FALSE(refused);
  EXPECT_TRUE(refused.error().message.starts_with("proxy: ")) << refused.error().message;
  EXPECT_NE(refused.error().message.find("HTTP 407: its credentials are missing or wrong"), std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(sleeps->get().empty()) << "a refusal is not retried";
}

TEST_F(GitHubThroughProxy, HttpsTunnelsThroughTheProxyAndAnUntrustedCaIsATlsError) {
  const auto ca_certificate = serve_tls(sim);
  ASSERT_TRUE(sim);
  auto proxy = start_proxy();
  ASSERT_TRUE(proxy);

  auto opts = fast_calls(sleeps);
  opts.health = std::make_shared<connection_health>();
  opts.proxy = http::proxy_options{};
  opts.proxy->https = http::proxy_endpoint{proxy->url(), {}, {}};
  auto untrusted = client(opts).registration_token();
  ASSERT_FALSE(untrusted);
  EXPECT_TRUE(untrusted.error().message.starts_with("TLS: ")) << untrusted.error().message;
  EXPECT_NE(untrusted.error().message.find("certificate"), std::string::npos) << untrusted.error().message;
  EXPECT_EQ(opts.health->problem(), untrusted.error().message);
  EXPECT_TRUE(sleeps->get().empty()) << "a TLS failure is not retried";

  opts.tls.ca_pem = ca_certificate;
  auto token = client(opts).registration_token();
  ASSERT_TRUE(token) << token.error().describe();
  const auto seen = proxy->requests();
  ASSERT_EQ(seen.size(), 2u) << proxy->log();
  EXPECT_EQ(seen[1], "CONNECT 127.0.0.1:" + std::to_string(sim->port()) + " HTTP/1.1");
}

}  // namespace
}  // namespace octorun::github
