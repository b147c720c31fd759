// The pod configuration of a RunnerSet (spec.containerMode, spec.proxy,
// spec.caBundle, spec.manageSafeToEvict): parsed, checked field by field,
// and fingerprinted (model/pod_config.hpp), and refused by the webhook.
#include "model/pod_config.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "adapters/admission/handlers.hpp"
#include "adapters/admission/validation.hpp"
#include "model/scope.hpp"
#include "test/admission/fixtures.hpp"

namespace octorun::admission {
namespace {

using test::doc;

std::string errors_of(const rapidjson::Document& d) {
  auto set = model::parse_runnerset(d);
  model::field_errors errors = set ? validate_runnerset(*set) : set.error();
  std::string out;
  for (const auto& e : errors) out += (out.empty() ? "" : " | ") + e.field + ": " + e.message;
  return out;
}

rapidjson::Document with(const char* pointer, const char* json) {
  auto d = doc(test::valid_runnerset_json());
  auto v = doc(json);
  test::set(d, pointer, v);
  return d;
}

TEST(PodConfig, IsParsedFromTheSetAndItsVariants) {
  auto d = with("/spec/containerMode",
                R"({"type":"kubernetes","workVolumeClaim":{"accessModes":["ReadWriteOnce"],)"
                R"("resources":{"requests":{"storage":"2Gi"}}}})");
  test::set(d, "/spec/variants/0/containerMode", doc(R"({"type":"dind"})"));
  test::set(d, "/spec/proxy",
            doc(R"({"https":{"url":"http://proxy:3128","credentialsSecretName":"p"},"noProxy":["a"]})"));
  test::set(d, "/spec/caBundle", doc(R"({"secretKeyRef":{"name":"ca","key":"ca.crt"}})"));
  test::set(d, "/spec/manageSafeToEvict", doc("true"));
  auto set = model::parse_runnerset(d);
  ASSERT_TRUE(set);
  const auto& pod = set->spec.pod;
  ASSERT_TRUE(pod.container_mode);
  EXPECT_EQ(pod.container_mode->type, model::container_mode::kubernetes);
  EXPECT_NE(pod.container_mode->work_volume_claim_json.find("2Gi"), std::string::npos);
  ASSERT_TRUE(pod.proxy && pod.proxy->https && !pod.proxy->http);
  EXPECT_EQ(pod.proxy->https->credentials_secret_name, "p");
  ASSERT_TRUE(pod.ca_bundle);
  EXPECT_EQ(pod.ca_bundle->from, model::ca_bundle_ref::source::secret);
  EXPECT_TRUE(pod.manage_safe_to_evict);
  auto variants = model::effective_variants(set->spec);
  EXPECT_EQ(variants[0].pod.container_mode->type, model::container_mode::dind) << "the variant's own mode";
  EXPECT_EQ(variants[1].pod.container_mode->type, model::container_mode::kubernetes) << "the set's";
  EXPECT_EQ(variants[1].pod.proxy, pod.proxy);
  EXPECT_TRUE(validate_runnerset(*set).empty()) << errors_of(d);
}

TEST(PodConfig, AnUnknownContainerModeNamesTheField) {
  EXPECT_EQ(errors_of(with("/spec/containerMode", R"({"type":"docker"})")),
            "spec.containerMode.type: must be dind or kubernetes, not \"docker\"");
  EXPECT_EQ(errors_of(with("/spec/variants/1/containerMode", R"({})")),
            "spec.variants[1].containerMode.type: is required: dind or kubernetes");
  EXPECT_EQ(
      errors_of(with("/spec/containerMode", R"({"type":"dind","workVolumeClaim":{"accessModes":["x"]}})")),
      "spec.containerMode.workVolumeClaim: only applies to containerMode type kubernetes");
  EXPECT_EQ(errors_of(with("/spec/containerMode",
                           R"({"type":"kubernetes","workVolumeClaim":{"storageClassName":"x"}})")),
            "spec.containerMode.workVolumeClaim.accessModes: is required, e.g. [ReadWriteOnce] | "
            "spec.containerMode.workVolumeClaim.resources.requests.storage: is required, e.g. 1Gi");
}

TEST(PodConfig, AProxyThatDoesNotParseNamesTheField) {
  EXPECT_EQ(errors_of(with("/spec/proxy", R"({"http":{"url":"proxy.corp:3128"}})")),
            "spec.proxy.http.url: \"proxy.corp:3128\" must start with http:// or https://");
  EXPECT_EQ(
      errors_of(with("/spec/proxy", R"({"https":{"url":"http://user:pw@proxy:3128"}})")),
      "spec.proxy.https.url: \"http://user:pw@proxy:3128\" must not contain a query, fragment, credentials "
      "or spaces (credentials come from credentialsSecretName)");
  EXPECT_EQ(errors_of(with("/spec/proxy", R"({"http":{"url":"http://proxy:99999"}})")),
            "spec.proxy.http.url: \"http://proxy:99999\" has an invalid host");
  EXPECT_EQ(errors_of(with("/spec/proxy", R"({"http":{"url":"http://proxy:3128/path"}})")),
            "spec.proxy.http.url: \"http://proxy:3128/path\" must be http(s)://HOST[:PORT] without a path");
  EXPECT_EQ(
      errors_of(with("/spec/proxy", R"({"noProxy":["a,b"]})")),
      "spec.proxy: set http, https or both | spec.proxy.noProxy[0]: \"a,b\" must be one host, domain or "
      "CIDR: give each as its own list item");
  EXPECT_EQ(
      errors_of(with("/spec/proxy", R"({"http":{"url":"http://p:1","credentialsSecretName":"Bad_Name"}})")),
      "spec.proxy.http.credentialsSecretName: \"Bad_Name\" is not a valid Secret name (lowercase letters, "
      "digits, '-' and '.')");
}

TEST(PodConfig, AWrongCaBundleReferenceNamesTheField) {
  EXPECT_EQ(errors_of(with("/spec/caBundle", R"({})")),
            "spec.caBundle: set exactly one of configMapKeyRef and secretKeyRef");
  EXPECT_EQ(
      errors_of(
          with("/spec/caBundle",
               R"({"configMapKeyRef":{"name":"ca","key":"ca.crt"},"secretKeyRef":{"name":"ca","key":"k"}})")),
      "spec.caBundle: set exactly one of configMapKeyRef and secretKeyRef");
  EXPECT_EQ(
      errors_of(with("/spec/caBundle", R"({"configMapKeyRef":{"name":"ca","key":"a/b"}})")),
      "spec.caBundle.configMapKeyRef.key: \"a/b\" is not a valid key: the key that holds the PEM bundle "
      "(letters, digits, '-', '_' and '.')");
  EXPECT_EQ(errors_of(with("/spec/caBundle", R"({"secretKeyRef":{"name":"","key":"ca.crt"}})")),
            "spec.caBundle.secretKeyRef.name: is required: the name of a Secret in this namespace");
}

TEST(PodConfig, TheWebhookDeniesAnUnknownModeWithTheField) {
  auto d = with("/spec/containerMode", R"({"type":"podman"})");
  auto reply = handle_review(
      endpoint::validate_runnerset,
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u",)"
      R"("kind":{"group":"octorun.io","version":"v1alpha1","kind":"RunnerSet"},)"
      R"("resource":{"group":"octorun.io","version":"v1alpha1","resource":"runnersets"},"name":"ci",)"
      R"("namespace":"team","operation":"CREATE","userInfo":{"username":"alice"},"object":)" +
          test::json(d) + R"(,"oldObject":null}})",
      admission_policy{});
  ASSERT_EQ(reply.status, 200) << reply.body;
  auto r = doc(reply.body.c_str());
  EXPECT_FALSE(r["response"]["allowed"].GetBool());
  EXPECT_STREQ(
      r["response"]["status"]["message"].GetString(),
      "RunnerSet \"ci\" is invalid: spec.containerMode.type: must be dind or kubernetes, not \"podman\"");
}

TEST(PodFingerprint, IgnoresMemberOrderAndSeesEveryPodInput) {
  model::pod_template a, b;
  a.json = R"({"spec":{"containers":[{"name":"runner","image":"r"}],"restartPolicy":"Never"}})";
  b.json = R"({"spec":{"restartPolicy":"Never","containers":[{"image":"r","name":"runner"}]}})";
  model::pod_config c;
  const auto base = model::pod_fingerprint(a, c);
  EXPECT_NE(base, 0u);  // 0 means unknown
  EXPECT_EQ(model::pod_fingerprint(b, c), base);
  b.json = R"({"spec":{"restartPolicy":"Never","containers":[{"image":"r2","name":"runner"}]}})";
  EXPECT_NE(model::pod_fingerprint(b, c), base);
  for (auto change : std::vector<std::function<void(model::pod_config&)>>{
           [](auto& p) {
             p.container_mode = model::container_mode_spec{model::container_mode::dind, ""};
           },
           [](auto& p) {
             p.proxy = model::proxy_spec{model::proxy_endpoint{"http://p:1", ""}, {}, {}};
           },
           [](auto& p) { p.ca_bundle = model::ca_bundle_ref{}; },
           [](auto& p) { p.manage_safe_to_evict = true; }}) {
    model::pod_config changed;
    change(changed);
    EXPECT_NE(model::pod_fingerprint(a, changed), base);
  }
}

TEST(SpecFingerprints, OnePerSharedSpecAsPodFingerprintGivesAndForgetsSpecsNobodyHolds) {
  model::spec_fingerprints memo;
  auto spec_with_image = [](const std::string& image) {
    model::runner_spec s;
    s.template_.json = R"({"spec":{"containers":[{"name":"runner","image":")" + image + R"("}]}})";
    return std::make_shared<const model::runner_spec>(std::move(s));
  };
  auto v1 = spec_with_image("r:1");
  auto v2 = spec_with_image("r:2");
  EXPECT_EQ(memo.of(v1), model::pod_fingerprint(v1->template_, v1->pod));
  EXPECT_EQ(memo.of(v1), memo.of(v1));
  EXPECT_EQ(memo.of(v2), model::pod_fingerprint(v2->template_, v2->pod));
  EXPECT_NE(memo.of(v1), memo.of(v2));
  EXPECT_EQ(memo.size(), 2u);
  // A rollout's worth of revisions nobody holds any more is forgotten.
  for (int i = 3; i < 20; ++i) memo.of(spec_with_image("r:" + std::to_string(i)));
  EXPECT_LE(memo.size(), 8u);
  EXPECT_EQ(memo.of(v1), model::pod_fingerprint(v1->template_, v1->pod));  // held: still known
  // Many specs held at once (specs with errors are never shared): answered, not all kept.
  std::vector<model::shared_runner_spec> held;
  for (int i = 0; i < 200; ++i) {
    held.push_back(spec_with_image("held:" + std::to_string(i)));
    EXPECT_EQ(memo.of(held.back()), model::pod_fingerprint(held.back()->template_, held.back()->pod));
  }
  EXPECT_LE(memo.size(), 64u);
}

TEST(ProxyUrl, IsSchemeHostAndPortOnly) {
  auto u = model::parse_proxy_url("HTTP://proxy.corp:3128/");
  ASSERT_TRUE(u) << u.error();
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->host, "proxy.corp:3128");
  EXPECT_EQ(u->path, "");
  EXPECT_TRUE(model::parse_proxy_url("https://10.0.0.1"));
  EXPECT_FALSE(model::parse_proxy_url(""));
  EXPECT_FALSE(model::parse_proxy_url("socks5://p:1080"));
}

}  // namespace
}  // namespace octorun::admission
