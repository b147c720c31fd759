// The objects the manager creates: a RunnerSet's Runners, a Runner's JIT
// Secret and Pod. Shapes are checked here; the apiserver accepts them in
// children_apiserver_test.cpp.
#include "actors/runner/children.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "actors/runnerset/runner_object.hpp"
#include "model/parse.hpp"

namespace octorun {
namespace {

rapidjson::Document parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  EXPECT_FALSE(d.HasParseError()) << s;
  return d;
}

model::runner sample_runner(const std::string& template_json) {
  model::runner r;
  r.metadata.name = "linux-large-x7k2p";
  r.metadata.namespace_ = "ci";
  r.metadata.uid = "uid-1";
  r.spec.runner_set_name = "linux";
  r.spec.variant = "large";
  r.spec.template_.json = template_json;
  return r;
}

const std::string tmpl =
    R"({"metadata":{"labels":{"team":"infra"},"annotations":{"a":"b"}},)"
    R"("spec":{"containers":[{"name":"sidecar","image":"busybox"},)"
    R"({"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0",)"
    R"("env":[{"name":"KEEP","value":"1"},{"name":"ACTIONS_RUNNER_INPUT_JITCONFIG","value":"leak"}]}]}})";

TEST(RunnerPod, CarriesTheTemplateOwnerLabelsAndTheJitConfigFromTheSecret) {
  auto pod_or = runner::pod_json(sample_runner(tmpl), "octorun/0.1.0");
  ASSERT_TRUE(pod_or) << pod_or.error();
  auto pod = parse(*pod_or);
  EXPECT_STREQ(pod["metadata"]["name"].GetString(), "linux-large-x7k2p");
  const auto& labels = pod["metadata"]["labels"];
  EXPECT_STREQ(labels["team"].GetString(), "infra");
  EXPECT_STREQ(labels["octorun.io/runnerset"].GetString(), "linux");
  EXPECT_STREQ(labels["octorun.io/variant"].GetString(), "large");
  EXPECT_STREQ(labels["octorun.io/runner"].GetString(), "linux-large-x7k2p");
  const auto& owner = pod["metadata"]["ownerReferences"][0];
  EXPECT_STREQ(owner["kind"].GetString(), "Runner");
  EXPECT_STREQ(owner["uid"].GetString(), "uid-1");
  EXPECT_TRUE(owner["controller"].GetBool());
  EXPECT_STREQ(pod["spec"]["restartPolicy"].GetString(), "Never");

  const auto& runner = pod["spec"]["containers"][1];
  const auto& env = runner["env"];
  ASSERT_EQ(env.Size(), 3u);
  EXPECT_STREQ(env[0]["name"].GetString(), "KEEP");
  EXPECT_STREQ(env[1]["name"].GetString(), "ACTIONS_RUNNER_INPUT_JITCONFIG");
  EXPECT_FALSE(env[1].HasMember("value")) << "the JIT configuration must come from the Secret";
  EXPECT_STREQ(env[1]["valueFrom"]["secretKeyRef"]["name"].GetString(), "linux-large-x7k2p-jit");
  EXPECT_STREQ(env[2]["value"].GetString(), "octorun/0.1.0");
  EXPECT_FALSE(pod["spec"]["containers"][0].HasMember("env")) << "only the runner container is touched";
}

TEST(RunnerPod, KeepsATemplatesOwnRestartPolicyAndIsDeterministic) {
  auto t = R"({"spec":{"restartPolicy":"OnFailure","containers":[{"name":"runner","image":"r"}]}})";
  auto a = runner::pod_json(sample_runner(t), "ua");
  ASSERT_TRUE(a);
  EXPECT_STREQ(parse(*a)["spec"]["restartPolicy"].GetString(), "OnFailure");
  EXPECT_EQ(*a, *runner::pod_json(sample_runner(t), "ua"));
}

TEST(RunnerPod, RefusesATemplateWithoutARunnerContainer) {
  auto bad =
      runner::pod_json(sample_runner(R"({"spec":{"containers":[{"name":"main","image":"x"}]}})"), "ua");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("runner"), std::string::npos);
  EXPECT_FALSE(runner::pod_json(sample_runner("not json"), "ua"));
}

TEST(JitSecret, RoundTripsAndRejectsDamage) {
  auto r = sample_runner(tmpl);
  auto secret = parse(runner::jit_secret_json(r, {"opaque-jit", 42, "linux-large-x7k2p"}));
  EXPECT_STREQ(secret["metadata"]["name"].GetString(), "linux-large-x7k2p-jit");
  EXPECT_STREQ(secret["metadata"]["ownerReferences"][0]["kind"].GetString(), "Runner");
  auto back = runner::read_jit_secret(secret);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->encoded, "opaque-jit");
  EXPECT_EQ(back->runner_id, 42);
  EXPECT_EQ(back->runner_name, "linux-large-x7k2p");

  secret["data"]["runnerId"].SetString("bm90LWEtbnVtYmVy");  // "not-a-number"
  EXPECT_FALSE(runner::read_jit_secret(secret));
  secret["data"].RemoveMember("runnerId");
  EXPECT_FALSE(runner::read_jit_secret(secret));
  EXPECT_FALSE(runner::read_jit_secret(parse(R"({"data":{"jitConfig":"!!!"}})")));
}

TEST(RunnerObject, IsOwnedByItsSetAndCarriesTheVariantsLabelsAndTemplate) {
  auto set = model::parse_runnerset(std::string(
      R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":"linux","namespace":"ci","uid":"set-uid"},)"
      R"("spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh","runnerLabels":["linux"],)"
      R"("template":{"spec":{"containers":[{"name":"runner","image":"small"}]}},)"
      R"("variants":[{"name":"large","runnerLabels":["large"],"template":{"spec":{"containers":[{"name":"runner","image":"big"}]}}}]}})"));
  ASSERT_TRUE(set) << (set ? "" : set.error()[0].field + ": " + set.error()[0].message);
  auto variants = model::effective_variants(set->spec);
  ASSERT_EQ(variants.size(), 1u);
  auto r = parse(runnerset::runner_json(*set, variants[0], "x7k2p"));
  EXPECT_STREQ(r["metadata"]["name"].GetString(), "linux-large-x7k2p");
  EXPECT_STREQ(r["metadata"]["ownerReferences"][0]["kind"].GetString(), "RunnerSet");
  EXPECT_STREQ(r["metadata"]["ownerReferences"][0]["uid"].GetString(), "set-uid");
  EXPECT_STREQ(r["metadata"]["labels"]["octorun.io/variant"].GetString(), "large");
  EXPECT_EQ(r["spec"]["runnerLabels"].Size(), 2u);
  EXPECT_STREQ(r["spec"]["template"]["spec"]["containers"][0]["image"].GetString(), "big");
  EXPECT_STREQ(r["spec"]["scopeURL"].GetString(), "https://github.com/acme");
}

}  // namespace
}  // namespace octorun
