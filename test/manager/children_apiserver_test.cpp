// The apiserver accepts the objects the manager builds (server-side dry run:
// full validation, including the CRD schemas, nothing persisted).
#include <gtest/gtest.h>

#include "actors/runner/children.hpp"
#include "actors/runnerset/runner_object.hpp"
#include "adapters/http/http_client.hpp"
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
    auto resp =
        api_.perform({"POST",
                      c_.server + collection + "?dryRun=All",
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

}  // namespace
}  // namespace octorun
