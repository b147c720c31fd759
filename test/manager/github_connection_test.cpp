// How a RunnerSet's GitHub clients connect (github_connection.hpp): under
// a RunnerClass the class's proxy (for every URL, credentials from the
// platform's namespace) and CA bundle, never the set's; without a class the
// set's proxy replaces the manager's, its credentials come from the Secret
// (percent-decoded), its CA bundle must be PEM, and every error names the
// field. The clients themselves go through a real proxy in
// test/github/proxy_test.cpp and the manager's binary tests.
#include "actors/runnerset/github_connection.hpp"

#include <gtest/gtest.h>

#include "adapters/tls/certificates.hpp"
#include "common/base64.hpp"
#include "common/json.hpp"
#include "test/support/json.hpp"

namespace octorun::runnerset {
namespace {

using test::parse_json;

struct objects {
  std::map<std::string, rapidjson::Document> by_key;
  void add(const std::string& key, const std::string& json) { by_key[key] = parse_json(json); }
  std::function<const rapidjson::Value*(const reference&)> lookup() const {
    return [this](const reference& ref) -> const rapidjson::Value* {
      auto it = by_key.find(ref.key);
      return it == by_key.end() ? nullptr : &it->second;
    };
  }
};

model::pod_config with_proxy(std::string url, std::string secret = "") {
  model::pod_config c;
  c.proxy = model::proxy_spec{
      std::nullopt, model::proxy_endpoint{std::move(url), std::move(secret)}, {".svc", "10.0.0.0/8"}};
  return c;
}

const http::proxy_options manager_proxy{http::proxy_endpoint{"http://env-proxy:3128", {}, {}}, std::nullopt,
                                        "localhost"};

TEST(SetNetwork, WithoutItsOwnProxyTheSetUsesTheManagers) {
  objects none;
  auto n = set_network_of({}, manager_proxy, none.lookup(), "ci");
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(n->proxy, manager_proxy);
  EXPECT_TRUE(n->ca_pem.empty());
  auto unset = set_network_of({}, std::nullopt, none.lookup(), "ci");
  ASSERT_TRUE(unset);
  EXPECT_FALSE(unset->proxy) << "no choice made: libcurl reads the environment";
}

TEST(SetNetwork, ItsOwnProxyReplacesTheManagersWithCredentialsFromTheSecret) {
  objects secrets;
  secrets.add("Secret/proxy-creds", R"({"data":{"username":")" + base64_encode("svc%40corp") +
                                        R"(","password":")" + base64_encode("p%3Ass+w") + R"("}})");
  auto n = set_network_of(with_proxy("http://proxy.corp:3128", "proxy-creds"), manager_proxy,
                          secrets.lookup(), "ci");
  ASSERT_TRUE(n) << n.error();
  ASSERT_TRUE(n->proxy);
  EXPECT_FALSE(n->proxy->http) << "the set declares no http proxy: http:// goes direct";
  ASSERT_TRUE(n->proxy->https);
  EXPECT_EQ(n->proxy->https->url, "http://proxy.corp:3128");
  EXPECT_EQ(n->proxy->https->username, "svc@corp");
  EXPECT_EQ(n->proxy->https->password, "p:ss+w");
  EXPECT_EQ(n->proxy->no_proxy, ".svc,10.0.0.0/8");
}

TEST(SetNetwork, AProxyUrlThatDoesNotParseNamesTheField) {
  objects none;
  auto n = set_network_of(with_proxy("proxy.corp:3128"), manager_proxy, none.lookup(), "ci");
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error(), "spec.proxy.https.url: \"proxy.corp:3128\" must start with http:// or https://");
  auto spaced = set_network_of(with_proxy("http://proxy corp:3128"), manager_proxy, none.lookup(), "ci");
  ASSERT_FALSE(spaced);
  EXPECT_TRUE(spaced.error().starts_with("spec.proxy.https.url: ")) << spaced.error();
}

TEST(SetNetwork, AMissingOrIncompleteCredentialsSecretNamesTheField) {
  objects none;
  auto missing = set_network_of(with_proxy("http://p:1", "gone"), manager_proxy, none.lookup(), "ci");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(),
            "spec.proxy.https.credentialsSecretName: Secret \"gone\" not found in namespace ci");
  objects partial;
  partial.add("Secret/half", R"({"data":{"username":"dQ=="}})");
  auto half = set_network_of(with_proxy("http://p:1", "half"), manager_proxy, partial.lookup(), "ci");
  ASSERT_FALSE(half);
  EXPECT_EQ(half.error(), "spec.proxy.https.credentialsSecretName: Secret \"half\" has no key \"password\"");
}

model::pod_config with_ca(model::ca_bundle_ref::source from) {
  model::pod_config c;
  c.ca_bundle = model::ca_bundle_ref{from, "corp-ca", "ca.crt"};
  return c;
}

TEST(SetNetwork, TheCaBundleMustBePemCertificates) {
  auto ca = tls::make_ca("corp", std::chrono::hours(1));
  ASSERT_TRUE(ca) << ca.error();
  objects good;
  json::allocator a;
  rapidjson::Value text(ca->certificate.c_str(), a);
  good.add("ConfigMap/corp-ca", R"({"data":{"ca.crt":)" + json::write(text) + "}}");
  auto n =
      set_network_of(with_ca(model::ca_bundle_ref::source::config_map), std::nullopt, good.lookup(), "ci");
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(n->ca_pem, ca->certificate);

  objects secret;
  secret.add("Secret/corp-ca", R"({"data":{"ca.crt":")" + base64_encode(ca->certificate) + R"("}})");
  auto from_secret =
      set_network_of(with_ca(model::ca_bundle_ref::source::secret), std::nullopt, secret.lookup(), "ci");
  ASSERT_TRUE(from_secret) << from_secret.error();
  EXPECT_EQ(from_secret->ca_pem, ca->certificate);

  objects broken;
  broken.add(
      "ConfigMap/corp-ca",
      R"({"data":{"ca.crt":"-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n"}})");
  auto bad =
      set_network_of(with_ca(model::ca_bundle_ref::source::config_map), std::nullopt, broken.lookup(), "ci");
  ASSERT_FALSE(bad);
  EXPECT_TRUE(
      bad.error().starts_with("spec.caBundle.configMapKeyRef: key \"ca.crt\" of ConfigMap \"corp-ca\" "
                              "is not a PEM certificate bundle: certificate 1 does not parse"))
      << bad.error();

  objects text_only;
  text_only.add("ConfigMap/corp-ca", R"({"data":{"ca.crt":"hello"}})");
  auto not_pem = set_network_of(with_ca(model::ca_bundle_ref::source::config_map), std::nullopt,
                                text_only.lookup(), "ci");
  ASSERT_FALSE(not_pem);
  EXPECT_EQ(not_pem.error(),
            "spec.caBundle.configMapKeyRef: key \"ca.crt\" of ConfigMap \"corp-ca\" holds no PEM certificate "
            "(-----BEGIN CERTIFICATE-----)");
}

model::manager_connection under_class(std::optional<model::class_proxy> proxy, std::string ca = "") {
  model::manager_connection c;
  c.class_name = "egress";
  c.by_class = model::class_connection{std::move(proxy), std::move(ca)};
  return c;
}

TEST(ClassNetwork, TheClassesProxyCarriesEveryUrlWithCredentialsFromThePlatformsNamespace) {
  auto c = under_class(model::class_proxy{"http://egress.corp:3128", "egress-login"});
  auto refs = references_of(c, "tenant", "octorun-system");
  EXPECT_EQ(refs.ns, "octorun-system") << "the class's Secret is the platform's, out of tenants' reach";
  ASSERT_EQ(refs.references.size(), 1u);
  EXPECT_EQ(refs.references[0].key, "Secret/egress-login");
  objects secrets;
  secrets.add("Secret/egress-login", R"({"data":{"username":")" + base64_encode("octorun") +
                                         R"(","password":")" + base64_encode("p%40ss") + R"("}})");
  auto n = network_of(c, manager_proxy, secrets.lookup(), refs);
  ASSERT_TRUE(n) << n.error();
  ASSERT_TRUE(n->proxy);
  const http::proxy_endpoint egress{"http://egress.corp:3128", "octorun", "p@ss"};
  EXPECT_EQ(n->proxy->https, egress);
  EXPECT_EQ(n->proxy->http, egress) << "http:// GitHub hosts too: no scheme bypasses the class's proxy";
  EXPECT_EQ(n->proxy->no_proxy, "") << "nor does the manager's NO_PROXY";
  EXPECT_TRUE(n->ca_pem.empty());

  objects none;
  auto missing = network_of(c, manager_proxy, none.lookup(), refs);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error(),
            "spec.github.proxy.credentialsSecretName of RunnerClass \"egress\": Secret \"egress-login\" not "
            "found in namespace octorun-system");
  auto bad_url =
      network_of(under_class(model::class_proxy{"egress.corp:3128", ""}), manager_proxy, none.lookup(), refs);
  ASSERT_FALSE(bad_url);
  EXPECT_EQ(
      bad_url.error(),
      "spec.github.proxy.url of RunnerClass \"egress\": \"egress.corp:3128\" must start with http:// or "
      "https://");
}

TEST(ClassNetwork, AClassWithoutAProxyLeavesTheManagersAndTheSetsOwnIsNeverUsed) {
  auto c = under_class(std::nullopt);
  // Whatever the connection carries of the set's, under a class it is not looked at.
  c.set_proxy = with_proxy("http://sink.tenant:8080", "sink-login").proxy;
  c.set_ca_bundle = model::ca_bundle_ref{model::ca_bundle_ref::source::config_map, "sink-ca", "ca.crt"};
  auto refs = references_of(c, "tenant", "octorun-system");
  EXPECT_TRUE(refs.references.empty()) << "nothing of the tenant's namespace is read";
  objects none;
  auto n = network_of(c, manager_proxy, none.lookup(), refs);
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(n->proxy, manager_proxy);
  EXPECT_TRUE(n->ca_pem.empty());
}

TEST(ClassNetwork, TheClassesCaBundleIsTrustedAndMustParse) {
  auto ca = tls::make_ca("corp", std::chrono::hours(1));
  ASSERT_TRUE(ca) << ca.error();
  objects none;
  auto good = under_class(std::nullopt, ca->certificate);
  auto n = network_of(good, std::nullopt, none.lookup(), references_of(good, "tenant", "platform"));
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(n->ca_pem, ca->certificate);
  EXPECT_EQ(n->ca_field, "spec.github.caBundle of RunnerClass \"egress\"");
  auto broken =
      under_class(std::nullopt, "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
  auto bad = network_of(broken, std::nullopt, none.lookup(), references_of(broken, "tenant", "platform"));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(
      bad.error().starts_with("spec.github.caBundle of RunnerClass \"egress\" is not a PEM certificate "
                              "bundle: certificate 1 does not parse"))
      << bad.error();
}

TEST(ClassNetwork, ASetWithoutAClassConnectsThroughItsOwnSettings) {
  model::manager_connection c;
  c.set_proxy = with_proxy("http://proxy.corp:3128", "proxy-creds").proxy;
  auto refs = references_of(c, "ci", "octorun-system");
  EXPECT_EQ(refs.ns, "ci");
  ASSERT_EQ(refs.references.size(), 1u);
  EXPECT_EQ(refs.references[0].field, "spec.proxy.https.credentialsSecretName");
  objects secrets;
  secrets.add("Secret/proxy-creds", R"({"data":{"username":"dQ==","password":"cA=="}})");
  auto n = network_of(c, manager_proxy, secrets.lookup(), refs);
  ASSERT_TRUE(n) << n.error();
  ASSERT_TRUE(n->proxy && n->proxy->https);
  EXPECT_EQ(n->proxy->https->url, "http://proxy.corp:3128");
  EXPECT_FALSE(n->proxy->http);
}

}  // namespace
}  // namespace octorun::runnerset
