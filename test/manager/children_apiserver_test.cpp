// The apiserver accepts the objects the manager builds (server-side dry run:
// full validation, including the CRD schemas, nothing persisted).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "actors/runner/children.hpp"
#include "actors/runnerset/pod_resources.hpp"
#include "actors/runnerset/runner_object.hpp"
#include "adapters/http/http_client.hpp"
#include "common/json.hpp"
#include "model/parse.hpp"
#include "test/support/test_cluster.hpp"

namespace octorun {
namespace {

class ChildrenOnTheApiserver : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto& c = test::cluster();
    test::install_crds(c);
  }

  ChildrenOnTheApiserver()
      : c_(test::cluster()),
        api_([&] {
          http::tls_options t;
          t.ca_file = c_.ca_file;
          return t;
        }()),
        ns_(test::make_namespace(c_, "children")) {}
  ~ChildrenOnTheApiserver() override {
    test::kubectl(c_, "delete namespace " + ns_ + " --wait=false >/dev/null");
  }

  http::response dry_run_create(const std::string& collection, const std::string& body) {
    return create(collection + "?dryRun=All", body);
  }
  http::response create(const std::string& collection, const std::string& body) {
    auto resp =
        api_.perform({"POST",
                      c_.server + collection,
                      {{"Authorization", "Bearer " + c_.admin_token}, {"Content-Type", "application/json"}},
                      body});
    EXPECT_TRUE(resp) << resp.error().message;
    return resp ? *resp : http::response{};
  }

  const test::cluster_info& c_;
  http::client api_;
  std::string ns_;
};

TEST_F(ChildrenOnTheApiserver, AcceptsTheRunnerSecretAndPodWeBuild) {
  auto set = model::parse_runnerset(
      R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":"linux","namespace":")" +
      ns_ +
      R"(","uid":"0b1c2d3e-0000-4000-8000-000000000001"},)"
      R"("spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh","runnerLabels":["linux"],)"
      R"("template":{"metadata":{"labels":{"team":"infra"}},"spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0","resources":{"limits":{"cpu":"2"}}}]}}}})");
  ASSERT_TRUE(set);
  auto variants = model::effective_variants(set->spec);
  auto runner_body = runnerset::runner_json(*set, variants[0], "abcde");
  auto created = dry_run_create("/apis/octorun.io/v1alpha1/namespaces/" + ns_ + "/runners", runner_body);
  EXPECT_EQ(created.status, 201) << created.body;

  auto runner = model::parse_runner(runner_body);
  ASSERT_TRUE(runner);
  runner->metadata.uid = "0b1c2d3e-0000-4000-8000-000000000002";
  auto secret =
      dry_run_create("/api/v1/namespaces/" + ns_ + "/secrets",
                     runner::jit_secret_json(*runner, {"eyJqaXQiOiJjb25maWcifQ==", 17, "linux-abcde"}));
  EXPECT_EQ(secret.status, 201) << secret.body;
  auto pod_body = runner::pod_json(*runner, "octorun/test");
  ASSERT_TRUE(pod_body) << pod_body.error();
  auto pod = dry_run_create("/api/v1/namespaces/" + ns_ + "/pods", *pod_body);
  EXPECT_EQ(pod.status, 201) << pod.body;
}

// The container-mode sets of test/variants/golden/ (dind with a proxy and a
// CA bundle ConfigMap; kubernetes with a claim template and a CA bundle
// Secret), moved into this namespace: the RunnerSet, its per-set objects, its
// Runner and the Runner's Pod are all accepted.
TEST_F(ChildrenOnTheApiserver, AcceptsTheContainerModeSetsTheirObjectsRunnersAndPods) {
  for (const std::string mode : {"dind", "kubernetes"}) {
    std::ifstream in(std::string(OCTORUN_GOLDEN_DIR) + "/" + mode + "/runnerset.json");
    std::ostringstream text;
    text << in.rdbuf();
    auto set = model::parse_runnerset(text.str());
    ASSERT_TRUE(set) << mode;
    set->metadata.namespace_ = ns_;
    rapidjson::Document body;
    body.Parse(text.str().c_str());
    body["metadata"].RemoveMember("uid");
    body["metadata"].RemoveMember("generation");
    body["metadata"]["namespace"].SetString(ns_.c_str(), body.GetAllocator());
    auto created =
        dry_run_create("/apis/octorun.io/v1alpha1/namespaces/" + ns_ + "/runnersets", json::write(body));
    EXPECT_EQ(created.status, 201) << mode << ": " << created.body;

    for (const auto& obj : runnerset::desired_pod_resources(*set, "octorun-runner-kubernetes-mode")) {
      const auto kind = runnerset::key_kind(obj.key);
      const std::string collection =
          kind == "ServiceAccount" ? "/api/v1/namespaces/" + ns_ + "/serviceaccounts"
          : kind == "RoleBinding"  ? "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns_ + "/rolebindings"
                                   : "/apis/policy/v1/namespaces/" + ns_ + "/poddisruptionbudgets";
      // The ServiceAccount for real: the pod below must find it.
      auto r = kind == "ServiceAccount" ? create(collection, obj.body) : dry_run_create(collection, obj.body);
      EXPECT_EQ(r.status, 201) << obj.key << ": " << r.body;
    }
    auto runner_body = runnerset::runner_json(*set, model::effective_variants(set->spec).at(0), "abcde");
    auto runner = dry_run_create("/apis/octorun.io/v1alpha1/namespaces/" + ns_ + "/runners", runner_body);
    EXPECT_EQ(runner.status, 201) << mode << ": " << runner.body;
    auto parsed = model::parse_runner(runner_body);
    ASSERT_TRUE(parsed);
    parsed->metadata.uid = "0b1c2d3e-0000-4000-8000-000000000003";
    auto pod_body = runner::pod_json(*parsed, "octorun/test");
    ASSERT_TRUE(pod_body) << pod_body.error();
    auto pod = dry_run_create("/api/v1/namespaces/" + ns_ + "/pods", *pod_body);
    EXPECT_EQ(pod.status, 201) << mode << ": " << pod.body;
  }
}

}  // namespace
}  // namespace octorun
