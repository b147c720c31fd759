// A RunnerSet's per-set objects and the objects its pod configuration refers
// to (pod_resources.hpp); the bodies themselves are pinned by the golden
// files in test/variants/golden/ and accepted by the apiserver in
// test/manager/children_apiserver_test.cpp.
#include "actors/runnerset/pod_resources.hpp"

#include <gtest/gtest.h>

#include "common/base64.hpp"
#include "model/parse.hpp"
#include "test/support/json.hpp"

namespace octorun::runnerset {
namespace {

using test::parse_json;

const std::string pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

model::pod_config ca_and_proxy() {
  model::pod_config c;
  c.ca_bundle = model::ca_bundle_ref{model::ca_bundle_ref::source::config_map, "corp-ca", "ca.crt"};
  c.proxy = model::proxy_spec{model::proxy_endpoint{"http://proxy:3128", "proxy-creds"},
                              model::proxy_endpoint{"http://proxy:3128", ""},
                              {}};
  return c;
}

TEST(PodReferences, NameTheObjectTheFieldAndTheKeysEachMustHold) {
  auto refs = pod_references(ca_and_proxy());
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0].key, "ConfigMap/corp-ca");
  EXPECT_EQ(refs[0].field, "spec.caBundle.configMapKeyRef");
  EXPECT_EQ(refs[0].keys, (std::vector<std::string>{"ca.crt"}));
  EXPECT_TRUE(refs[0].pem);
  EXPECT_EQ(refs[1].key, "Secret/proxy-creds");
  EXPECT_EQ(refs[1].field, "spec.proxy.http.credentialsSecretName");
  EXPECT_EQ(refs[1].keys, (std::vector<std::string>{"username", "password"}));
  EXPECT_TRUE(pod_references({}).empty());
}

TEST(PodReferences, AWrongObjectGetsASentenceNamingTheField) {
  auto refs = pod_references(ca_and_proxy());
  const auto& ca = refs[0];
  EXPECT_FALSE(reference_problem(
      ca, parse_json(R"({"data":{"ca.crt":")" + std::string("-----BEGIN CERTIFICATE-----\\nx") + R"("}})")));
  EXPECT_EQ(reference_problem(ca, parse_json(R"({"data":{"other":"x"}})")),
            "spec.caBundle.configMapKeyRef: ConfigMap \"corp-ca\" has no key \"ca.crt\"");
  EXPECT_EQ(reference_problem(ca, parse_json(R"({"data":{"ca.crt":"not a certificate"}})")),
            "spec.caBundle.configMapKeyRef: key \"ca.crt\" of ConfigMap \"corp-ca\" holds no PEM certificate "
            "(-----BEGIN CERTIFICATE-----)");
  // A Secret's data is base64.
  reference secret_ca{"Secret/corp-ca", "spec.caBundle.secretKeyRef", {"bundle.pem"}, true};
  EXPECT_FALSE(
      reference_problem(secret_ca, parse_json(R"({"data":{"bundle.pem":")" + base64_encode(pem) + R"("}})")));
  EXPECT_TRUE(reference_problem(secret_ca,
                                parse_json(R"({"data":{"bundle.pem":")" + base64_encode("junk") + R"("}})")));
  const auto& proxy = refs[1];
  EXPECT_EQ(reference_problem(proxy, parse_json(R"({"data":{"username":"dQ=="}})")),
            "spec.proxy.http.credentialsSecretName: Secret \"proxy-creds\" has no key \"password\"");
}

TEST(PodConfigCondition, SaysTheFirstKindOfProblemElseApplied) {
  model::runnerset_status status;
  auto c = pod_config_condition({{"spec.proxy.http.url", "bad"}}, "", {{"Role/x", "403"}}, {}, false, status);
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "InvalidSpec");
  EXPECT_EQ(c.message, "spec.proxy.http.url: bad");
  c = pod_config_condition({}, "old CRD", {{"Role/x", "403"}}, {}, false, status);
  EXPECT_EQ(c.reason, "RunnerCRDOutdated");
  EXPECT_EQ(c.message, "old CRD");
  c = pod_config_condition({}, "", {{"Role/x", "403"}}, {{"ConfigMap/y", "missing"}}, false, status);
  EXPECT_EQ(c.reason, "ApplyFailed");
  EXPECT_EQ(c.message, "Role/x: 403");
  c = pod_config_condition({}, "", {}, {{"ConfigMap/y", "missing"}, {"Secret/z", ""}}, true, status);
  EXPECT_EQ(c.reason, "ReferenceInvalid");
  EXPECT_EQ(c.message, "missing");
  c = pod_config_condition({}, "", {}, {{"Secret/z", ""}}, true, status);
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, "Applied");
  // Not applied yet (a restart): what the status said stays, so no flapping write.
  EXPECT_EQ(pod_config_condition({}, "", {}, {}, false, status).status, "Unknown");
  status.conditions.push_back(c);
  EXPECT_EQ(pod_config_condition({}, "", {}, {}, false, status).status, "True");
}

TEST(PodResources, TheHooksBindingIsOnlyForKubernetesModeOnTheSetsOwnServiceAccount) {
  auto set = model::parse_runnerset(
      R"({"metadata":{"name":"k","namespace":"ci","uid":"u"},"spec":{"template":{"spec":{"containers":[{"name":"runner","image":"r"}]}},)"
      R"("variants":[{"name":"a","runnerLabels":["a"]},{"name":"b","runnerLabels":["b"],"containerMode":{"type":"kubernetes"}}]}})");
  ASSERT_TRUE(set);
  EXPECT_TRUE(wants_kubernetes_rbac(set->spec));
  auto objects = desired_pod_resources(*set, "hooks");
  ASSERT_EQ(objects.size(), 3u);
  EXPECT_EQ(objects[1].key, "RoleBinding/octorun-hooks-k");
  // The platform's ClusterRole, bound in the set's namespace: no Role of the manager's.
  auto binding = parse_json(objects[1].body);
  EXPECT_EQ(std::string(binding["roleRef"]["kind"].GetString()), "ClusterRole");
  EXPECT_EQ(std::string(binding["roleRef"]["name"].GetString()), "hooks");
  EXPECT_EQ(std::string(binding["subjects"][0]["name"].GetString()), "octorun-runner-k");
  EXPECT_EQ(std::string(binding["metadata"]["namespace"].GetString()), "ci");
  EXPECT_FALSE(kubernetes_rbac_unavailable(set->spec, "hooks"));
  // No ClusterRole given: no binding, and the field that asks for one is named.
  EXPECT_EQ(desired_pod_resources(*set).size(), 2u);
  auto unavailable = kubernetes_rbac_unavailable(set->spec, "");
  ASSERT_TRUE(unavailable);
  EXPECT_EQ(unavailable->field, "spec.variants[1].containerMode");
  EXPECT_EQ(kubernetes_rbac_keys("k"),
            (std::vector<std::string>{"RoleBinding/octorun-hooks-k", "RoleBinding/octorun-runner-k"}));
  set->spec.variants[1].template_ = set->spec.template_;
  set->spec.variants[1].template_->service_account_name = "mine";  // the user's RBAC
  EXPECT_FALSE(wants_kubernetes_rbac(set->spec));
  EXPECT_FALSE(kubernetes_rbac_unavailable(set->spec, ""));
  EXPECT_EQ(key_kind("RoleBinding/octorun-hooks-k"), "RoleBinding");
  EXPECT_EQ(key_name("RoleBinding/octorun-hooks-k"), "octorun-hooks-k");
}

}  // namespace
}  // namespace octorun::runnerset
