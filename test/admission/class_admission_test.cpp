// The RunnerSet webhook and RunnerClasses (handlers.cpp judge_class): a set
// is judged against its class on create and on a change of its spec, with
// the classes and its namespace's labels read for each judgement; a
// judgement that cannot be made refuses the set.
#include <gtest/gtest.h>

#include "adapters/admission/handlers.hpp"
#include "adapters/tls/certificates.hpp"
#include "model/runner_class.hpp"
#include "test/admission/fixtures.hpp"

namespace octorun::admission {
namespace {

using test::doc;

std::string review_json(const std::string& operation, const std::string& object,
                        const std::string& old = "null") {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",
    "kind":{"group":"octorun.io","version":"v1alpha1","kind":"RunnerSet"},
    "resource":{"group":"octorun.io","version":"v1alpha1","resource":"runnersets"},
    "name":"ci","namespace":"team","operation":")" +
         operation + R"(","userInfo":{"username":"alice"},"object":)" + object + R"(,"oldObject":)" + old +
         "}}";
}

// The class "team-web" admits namespaces labelled team=web, on github.com,
// for acme's web-* repositories, with the class's credentials.
model::platform_classes platform(const std::string& team_label) {
  model::platform_classes p;
  auto c = model::parse_runner_class(R"({"metadata":{"name":"team-web"},"spec":{
    "namespaceSelector":{"matchLabels":{"team":"web"}},
    "github":{"scopes":["https://github.com/acme/web-*"],"credentialsSecretName":"acme-web"}}})");
  EXPECT_TRUE(c);
  p.classes.emplace("team-web", *c);
  p.namespace_labels["team"] = {{"team", team_label}};
  return p;
}

admission_policy with_classes(
    std::function<expected<model::platform_classes, std::string>(const std::string&)> f) {
  admission_policy p;
  p.classes = std::move(f);
  return p;
}

std::string set_json(const std::string& scope) {
  auto d = doc(test::valid_runnerset_json());
  test::erase(d, "/spec/credentialsSecretName");
  test::set(d, "/spec/runnerClassName", std::string("team-web"));
  test::set(d, "/spec/scopeURL", scope);
  return json::write(d);
}

rapidjson::Document reply(const admission_policy& policy, const std::string& operation,
                          const std::string& object, const std::string& old = "null") {
  auto r = handle_review(endpoint::validate_runnerset, review_json(operation, object, old), policy);
  EXPECT_EQ(r.status, 200) << r.body;
  return doc(r.body.c_str());
}

TEST(ClassAdmission, AdmitsASetItsClassAllows) {
  std::string asked;
  auto policy = with_classes([&](const std::string& ns) {
    asked = ns;
    return platform("web");
  });
  auto d = reply(policy, "CREATE", set_json("https://github.com/acme/web-shop"));
  EXPECT_TRUE(d["response"]["allowed"].GetBool());
  EXPECT_EQ(asked, "team") << "the set's own namespace's labels are read";
}

TEST(ClassAdmission, RefusesASetItsClassDoesNotAllowNamingFieldRuleAndClass) {
  auto policy = with_classes([](const std::string&) { return platform("web"); });
  auto d = reply(policy, "CREATE", set_json("https://sink.example/acme"));
  ASSERT_FALSE(d["response"]["allowed"].GetBool());
  const std::string message = d["response"]["status"]["message"].GetString();
  EXPECT_NE(message.find("spec.scopeURL: \"https://sink.example/acme\" is not on a GitHub server RunnerClass "
                         "\"team-web\" allows (spec.github.servers: https://github.com, https://*.ghe.com)"),
            std::string::npos)
      << message;
  d = reply(policy, "CREATE", set_json("https://github.com/acme/billing"));
  EXPECT_FALSE(d["response"]["allowed"].GetBool());
  auto other_team = with_classes([](const std::string&) { return platform("billing"); });
  d = reply(other_team, "CREATE", set_json("https://github.com/acme/web-shop"));
  ASSERT_FALSE(d["response"]["allowed"].GetBool());
  EXPECT_NE(
      std::string(d["response"]["status"]["message"].GetString()).find("does not admit namespace \"team\""),
      std::string::npos);
}

TEST(ClassAdmission, ASpecChangeIsJudgedAMetadataWriteIsNot) {
  auto narrowed = with_classes([](const std::string&) { return platform("billing"); });
  const auto before = set_json("https://github.com/acme/web-shop");
  auto with_finalizer = doc(before.c_str());
  test::set(with_finalizer, "/metadata/finalizers/0", std::string("octorun.io/runnerset"));
  auto d = reply(narrowed, "UPDATE", json::write(with_finalizer), before);
  EXPECT_TRUE(d["response"]["allowed"].GetBool())
      << "the manager's finalizer goes on whatever the class says now";
  d = reply(narrowed, "UPDATE", set_json("https://github.com/acme/web-cart"), before);
  EXPECT_FALSE(d["response"]["allowed"].GetBool());
}

TEST(ClassAdmission, FailsClosedWhenTheClassesCannotBeRead) {
  auto broken = with_classes([](const std::string&) -> expected<model::platform_classes, std::string> {
    return unexpected<std::string>{"RunnerClasses: 503 Service Unavailable"};
  });
  auto d = reply(broken, "CREATE", set_json("https://github.com/acme/web-shop"));
  ASSERT_FALSE(d["response"]["allowed"].GetBool());
  EXPECT_NE(std::string(d["response"]["status"]["message"].GetString()).find("cannot be judged now"),
            std::string::npos);
}

// spec.maxRunnersPerNamespace: the namespace's other sets under the class,
// as listed for the judgement, and the set written (its variants summed: 7).
TEST(ClassAdmission, RefusesASetThatTakesItsNamespaceOverTheClassesCap) {
  auto capped = [](int cap, std::int64_t others) {
    auto p = platform("web");
    p.classes.at("team-web").spec.max_runners_per_namespace = cap;
    p.namespace_sets["team"] = {{"older", 1, "team-web", others, "", ""},
                                {"elsewhere", 1, "other-class", 50, "", ""}};
    return p;
  };
  auto within = with_classes([&](const std::string&) { return capped(10, 3); });
  EXPECT_TRUE(
      reply(within, "CREATE", set_json("https://github.com/acme/web-shop"))["response"]["allowed"].GetBool());
  auto over = with_classes([&](const std::string&) { return capped(10, 4); });
  auto d = reply(over, "CREATE", set_json("https://github.com/acme/web-shop"));
  ASSERT_FALSE(d["response"]["allowed"].GetBool());
  const std::string message = d["response"]["status"]["message"].GetString();
  EXPECT_NE(
      message.find("spec.maxRunners: takes the sets of namespace \"team\" under RunnerClass \"team-web\" "
                   "to 11 runners (4 of them the other sets'), more than the 10 the class allows per "
                   "namespace (spec.maxRunnersPerNamespace)"),
      std::string::npos)
      << message;
}

// A set in containerMode kubernetes beside another set's own credentials in
// its namespace (model/namespace_secrets.hpp): refused naming both.
TEST(ClassAdmission, RefusesAKubernetesModeSetBesideATenantsCredentials) {
  auto beside = [](const std::string& credentials) {
    auto p = platform("web");
    p.namespace_sets["team"] = {{"creds", 1, "team-web", 2, credentials, ""}};
    return p;
  };
  auto d = doc(set_json("https://github.com/acme/web-shop").c_str());
  test::set(d, "/spec/containerMode/type", std::string("kubernetes"));
  const auto kube = json::write(d);
  auto apart = with_classes([&](const std::string&) { return beside(""); });
  EXPECT_TRUE(reply(apart, "CREATE", kube)["response"]["allowed"].GetBool());
  auto together = with_classes([&](const std::string&) { return beside("tenant-pat"); });
  auto r = reply(together, "CREATE", kube);
  ASSERT_FALSE(r["response"]["allowed"].GetBool());
  const std::string message = r["response"]["status"]["message"].GetString();
  EXPECT_NE(message.find("spec.containerMode.type: must not be kubernetes in namespace \"team\": RunnerSet "
                         "\"creds\" keeps its credentials there (Secret \"tenant-pat\")"),
            std::string::npos)
      << message;
}

TEST(ClassAdmission, ASetWithoutAClassNeedsADefaultOrThePlatformsLeave) {
  auto d = doc(test::valid_runnerset_json());
  auto none = with_classes([](const std::string&) { return model::platform_classes{}; });
  auto r = reply(none, "CREATE", json::write(d));
  ASSERT_FALSE(r["response"]["allowed"].GetBool());
  EXPECT_NE(std::string(r["response"]["status"]["message"].GetString()).find("--allow-sets-without-class"),
            std::string::npos);
  none.allow_sets_without_class = true;
  EXPECT_TRUE(reply(none, "CREATE", json::write(d))["response"]["allowed"].GetBool());
}

// The class webhook's answer to a RunnerClass "team-web" with `spec`.
rapidjson::Document class_review(const std::string& operation, const std::string& spec) {
  const std::string object = R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerClass",)"
                             R"("metadata":{"name":"team-web"},"spec":)" +
                             spec + "}";
  const std::string body =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-2",
    "kind":{"group":"octorun.io","version":"v1alpha1","kind":"RunnerClass"},
    "resource":{"group":"octorun.io","version":"v1alpha1","resource":"runnerclasses"},
    "name":"team-web","operation":")" +
      operation + R"(","userInfo":{"username":"admin"},"object":)" + object + "}}";
  auto r = handle_review(endpoint::validate_runnerclass, body, admission_policy{});
  EXPECT_EQ(r.status, 200) << r.body;
  return doc(r.body.c_str());
}

TEST(ClassAdmission, RefusesAClassThatBreaksARuleNamingFieldRuleAndClass) {
  auto review = class_review;
  auto d = review("CREATE", R"({"namespaceSelector":{},"github":{"servers":["https://*.com"],)"
                            R"("credentialsSecretName":"pat"}})");
  ASSERT_FALSE(d["response"]["allowed"].GetBool());
  const std::string message = d["response"]["status"]["message"].GetString();
  EXPECT_NE(message.find("RunnerClass \"team-web\""), std::string::npos) << message;
  EXPECT_NE(
      message.find("spec.github.servers[0]: \"https://*.com\": a wildcard must stand under a domain of two "
                   "labels or more"),
      std::string::npos)
      << message;
  d = review("UPDATE", R"({"github":{"credentialsSecretName":"pat"}})");
  EXPECT_FALSE(d["response"]["allowed"].GetBool()) << "namespaceSelector is required";
  d = review("CREATE",
             R"({"namespaceSelector":{"matchLabels":{"team":"web"}},)"
             R"("github":{"scopes":["https://github.com/acme/web-*"],"credentialsSecretName":"pat"}})");
  EXPECT_TRUE(d["response"]["allowed"].GetBool()) << json::write(d);
}

// The message of a refused class whose spec.github has `github` besides its Secret.
std::string class_refusal(const std::string& github) {
  auto d = class_review(
      "CREATE", R"({"namespaceSelector":{},"github":{"credentialsSecretName":"pat",)" + github + "}}");
  if (d["response"]["allowed"].GetBool()) return "";
  return d["response"]["status"]["message"].GetString();
}

std::string json_string(const std::string& text) {
  json::allocator a;
  rapidjson::Value v(text.c_str(), a);
  return json::write(v);
}

TEST(ClassAdmission, RefusesAClassWhoseProxyOrCaBundleIsBadNamingTheFieldAndRule) {
  auto ca = tls::make_ca("corp", std::chrono::hours(1));
  ASSERT_TRUE(ca) << ca.error();
  EXPECT_EQ(class_refusal(R"("proxy":{"url":"http://egress.corp:3128","credentialsSecretName":"egress"},)"
                          R"("caBundle":)" +
                          json_string(ca->certificate)),
            "");
  EXPECT_EQ(
      class_refusal(R"("proxy":{"url":"egress.corp:3128"})"),
      "RunnerClass \"team-web\" is invalid: spec.github.proxy.url: \"egress.corp:3128\" must start with "
      "http:// or https://");
  EXPECT_EQ(class_refusal(R"("caBundle":"LS0tLS1CRUdJTi0tLS0t")"),
            "RunnerClass \"team-web\" is invalid: spec.github.caBundle: holds no PEM certificate "
            "(-----BEGIN CERTIFICATE-----): give the certificates' PEM text itself, not base64");
  // PEM markers around what is no certificate: OpenSSL says so.
  const auto damaged = class_refusal(
      R"("caBundle":"-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n")");
  EXPECT_TRUE(
      damaged.starts_with("RunnerClass \"team-web\" is invalid: spec.github.caBundle: is not a PEM "
                          "certificate bundle: certificate 1 does not parse"))
      << damaged;
}

TEST(ClassAdmission, ASetsOwnProxyAndCaUnderAClassAreAdmittedWithAWarningNamingFieldAndClass) {
  auto policy = with_classes([](const std::string&) { return platform("web"); });
  auto d = doc(set_json("https://github.com/acme/web-shop").c_str());
  test::set(d, "/spec/proxy", doc(R"({"https":{"url":"http://sink.tenant:8080"}})"));
  test::set(d, "/spec/caBundle", doc(R"({"configMapKeyRef":{"name":"sink-ca","key":"ca.crt"}})"));
  auto r = reply(policy, "CREATE", json::write(d));
  ASSERT_TRUE(r["response"]["allowed"].GetBool()) << json::write(r);
  ASSERT_TRUE(r["response"].HasMember("warnings")) << json::write(r);
  const auto& warnings = r["response"]["warnings"];
  ASSERT_EQ(warnings.Size(), 2u);
  EXPECT_EQ(std::string(warnings[0].GetString()),
            "spec.proxy: applies to the runner pods only; the manager's own GitHub connections for this set "
            "follow RunnerClass \"team-web\", which names no proxy (spec.github.proxy): the manager's own "
            "environment decides");
  EXPECT_NE(std::string(warnings[1].GetString()).find("spec.caBundle: applies to the runner pods only"),
            std::string::npos);
  auto plain = reply(policy, "CREATE", set_json("https://github.com/acme/web-shop"));
  EXPECT_FALSE(plain["response"].HasMember("warnings")) << "nothing to say of a set without them";
}

}  // namespace
}  // namespace octorun::admission
