// The HTTPS webhook server and its certificates, without a cluster: it serves
// AdmissionReviews over TLS that verifies against its caBundle, keeps its CA
// across restarts, and rotates certificates before they expire.
#include "adapters/admission/webhook_server.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "adapters/http/http_client.hpp"
#include "adapters/tls/certificates.hpp"
#include "common/json_parse.hpp"
#include "test/admission/fixtures.hpp"

namespace octorun::admission {
namespace {

namespace fs = std::filesystem;

class WebhookServer : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(http::tls_available()) << "civetweb cannot load OpenSSL (adapters/http/openssl_compat)";
    char tmpl[] = "/tmp/octorun-admission-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override { fs::remove_all(dir); }

  self_signed_config config() const {
    self_signed_config c;
    c.dir = dir + "/certs";
    c.ip_addresses = {"127.0.0.1"};
    c.dns_names = {"localhost"};
    return c;
  }
  static webhook_server_options local() {
    webhook_server_options o;
    o.bind_address = "127.0.0.1";
    return o;
  }
  // POSTs a RunnerSet review, trusting only `ca_bundle`.
  static expected<http::response, http::transport_error> call(const webhook_server& s,
                                                              const std::string& ca_bundle) {
    http::tls_options trust;
    trust.ca_pem = ca_bundle;
    http::client c(trust);
    std::string body = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x",)"
                       R"("operation":"CREATE","object":)" +
                       std::string(test::valid_runnerset_json()) + "}}";
    return c.perform(
        {"POST", s.url(endpoint::validate_runnerset), {{"Content-Type", "application/json"}}, body});
  }
  std::string dir;
};

TEST(CertificateRotation, IsDueWithinTheMargin) {
  EXPECT_TRUE(rotation_due(10, std::chrono::seconds(60)));
  EXPECT_TRUE(rotation_due(-5, std::chrono::seconds(0)));
  EXPECT_FALSE(rotation_due(61, std::chrono::seconds(60)));
}

TEST_F(WebhookServer, ServesReviewsOverHttpsTrustedThroughItsCaBundle) {
  auto srv = webhook_server::start(local(), certificate_source::self_signed(config()));
  ASSERT_TRUE(srv) << srv.error();
  EXPECT_NE((*srv)->port(), 0);
  EXPECT_NE((*srv)->ca_bundle().find("BEGIN CERTIFICATE"), std::string::npos);
  auto resp = call(**srv, (*srv)->ca_bundle());
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
  EXPECT_NE(resp->body.find(R"("allowed":true)"), std::string::npos) << resp->body;
  // Another CA is not trusted.
  auto other = tls::make_ca("other", std::chrono::hours(1));
  ASSERT_TRUE(other);
  EXPECT_FALSE(call(**srv, other->certificate));
  // The private keys are not world-readable.
  auto perms = fs::status(dir + "/certs/ca.key").permissions();
  EXPECT_EQ(perms & fs::perms::others_read, fs::perms::none);
}

TEST_F(WebhookServer, KeepsItsCaAcrossRestarts) {
  std::string first;
  {
    auto srv = webhook_server::start(local(), certificate_source::self_signed(config()));
    ASSERT_TRUE(srv) << srv.error();
    first = (*srv)->ca_bundle();
  }
  auto again = webhook_server::start(local(), certificate_source::self_signed(config()));
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ((*again)->ca_bundle(), first);
}

TEST_F(WebhookServer, RotatesTheServingCertificateBeforeItExpiresOnTheSamePort) {
  auto c = config();
  c.serving_validity = std::chrono::hours(1);
  auto o = local();
  o.rotate_before = std::chrono::hours(2);  // always due: exercises the rotation path
  auto srv = webhook_server::start(o, certificate_source::self_signed(c));
  ASSERT_TRUE(srv) << srv.error();
  const auto port = (*srv)->port();
  std::ifstream in(c.dir + "/tls.crt");
  std::string leaf_before((std::istreambuf_iterator<char>(in)), {});
  auto rotated = (*srv)->rotate_if_due();
  ASSERT_TRUE(rotated) << rotated.error();
  EXPECT_TRUE(*rotated);
  EXPECT_EQ((*srv)->port(), port);
  std::ifstream in2(c.dir + "/tls.crt");
  std::string leaf_after((std::istreambuf_iterator<char>(in2)), {});
  EXPECT_NE(leaf_before, leaf_after);
  auto resp = call(**srv, (*srv)->ca_bundle());
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
}

TEST_F(WebhookServer, DoesNotRotateAFreshCertificate) {
  auto srv = webhook_server::start(local(), certificate_source::self_signed(config()));
  ASSERT_TRUE(srv) << srv.error();
  auto rotated = (*srv)->rotate_if_due();
  ASSERT_TRUE(rotated) << rotated.error();
  EXPECT_FALSE(*rotated);
}

TEST_F(WebhookServer, ReplacesAnExpiringCaAndTrustsBothDuringTheChange) {
  auto c = config();
  c.ca_validity = std::chrono::hours(3);
  c.serving_validity = std::chrono::hours(1);
  auto source = certificate_source::self_signed(c);
  auto first = source.issue(std::chrono::seconds(0));
  ASSERT_TRUE(first) << first.error();
  // 3 h left is not enough for 1 h of serving + a 2 h margin: a new CA.
  auto second = source.issue(std::chrono::hours(2));
  ASSERT_TRUE(second) << second.error();
  EXPECT_NE(second->ca_bundle.find(first->ca_bundle.substr(0, first->ca_bundle.size() - 1)),
            std::string::npos);
  EXPECT_GT(second->ca_bundle.size(), first->ca_bundle.size());
}

TEST_F(WebhookServer, LoadsCertificateFilesAndReloadsThemWhenTheyChange) {
  auto write_pair = [&](const std::string& cn) {
    auto ca = tls::make_ca(cn, std::chrono::hours(24));
    ASSERT_TRUE(ca);
    auto leaf = tls::issue_serving_certificate(*ca, {"localhost", {"localhost"}, {"127.0.0.1"}});
    ASSERT_TRUE(leaf);
    std::ofstream(dir + "/tls.crt") << leaf->certificate;
    std::ofstream(dir + "/tls.key") << leaf->private_key;
    std::ofstream(dir + "/ca.crt") << ca->certificate;
  };
  write_pair("first-ca");
  certificate_files files{dir + "/tls.crt", dir + "/tls.key", dir + "/ca.crt", dir + "/work"};
  auto srv = webhook_server::start(local(), certificate_source::from_files(files));
  ASSERT_TRUE(srv) << srv.error();
  const auto first_bundle = (*srv)->ca_bundle();
  ASSERT_TRUE(call(**srv, first_bundle));
  auto unchanged = (*srv)->rotate_if_due();
  ASSERT_TRUE(unchanged);
  EXPECT_FALSE(*unchanged);

  write_pair("second-ca");  // cert-manager renewed the Secret
  auto reloaded = (*srv)->rotate_if_due();
  ASSERT_TRUE(reloaded) << reloaded.error();
  EXPECT_TRUE(*reloaded);
  EXPECT_NE((*srv)->ca_bundle(), first_bundle);
  auto resp = call(**srv, (*srv)->ca_bundle());
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
}

TEST_F(WebhookServer, FailsToStartWithoutItsCertificateFiles) {
  certificate_files files{dir + "/missing.crt", dir + "/missing.key", "", dir + "/work"};
  auto srv = webhook_server::start(local(), certificate_source::from_files(files));
  ASSERT_FALSE(srv);
  EXPECT_NE(srv.error().find("cannot read the certificate file"), std::string::npos) << srv.error();
}

TEST_F(WebhookServer, AnswersMalformedDeepOrOverSizeReviewsWith400Or413) {
  auto srv = webhook_server::start(local(), certificate_source::self_signed(config()));
  ASSERT_TRUE(srv) << srv.error();
  http::tls_options trust;
  trust.ca_pem = (*srv)->ca_bundle();
  http::client c(trust);
  auto malformed = c.perform({"POST", (*srv)->url(endpoint::validate_runner), {}, "{nope"});
  ASSERT_TRUE(malformed) << malformed.error().message;
  EXPECT_EQ(malformed->status, 400);

  // 100,000 levels of nesting overflowed a civetweb worker's stack with the
  // recursive parser (the pod restarted); an over-size body is refused unread.
  std::string objects;
  for (int i = 0; i < 100'000; ++i) objects += R"({"a":)";
  for (auto e : {endpoint::mutate_runnerset, endpoint::validate_runnerset, endpoint::validate_runner,
                 endpoint::validate_runnerclass}) {
    const auto url = (*srv)->url(e);
    for (const auto& body : {std::string(100'000, '['), objects,
                             R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":)" +
                                 std::string(100'000, '[')}) {
      auto resp = c.perform({"POST", url, {{"Content-Type", "application/json"}}, body});
      ASSERT_TRUE(resp) << resp.error().message;
      EXPECT_EQ(resp->status, 400) << url;
      EXPECT_NE(resp->body.find("JSON nested deeper than 128 levels"), std::string::npos)
          << url << resp->body;
    }
    auto big = c.perform({"POST",
                          url,
                          {{"Content-Type", "application/json"}},
                          std::string(json::sources::admission_review.max_bytes + 1, '[')});
    ASSERT_TRUE(big) << big.error().message;
    EXPECT_EQ(big->status, 413) << url;
  }
  // Still serving.
  auto resp = call(**srv, (*srv)->ca_bundle());
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
}

}  // namespace
}  // namespace octorun::admission
