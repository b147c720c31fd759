// The AdmissionReview codec, the endpoint decisions, defaulting patches and
// the webhook configuration JSON.
#include "adapters/admission/review.hpp"

#include <gtest/gtest.h>

#include "adapters/admission/defaults.hpp"
#include "adapters/admission/handlers.hpp"
#include "adapters/admission/webhook_configuration.hpp"
#include "common/base64.hpp"
#include "test/admission/fixtures.hpp"

namespace octorun::admission {
namespace {

using test::doc;

std::string review_json(const std::string& operation, const std::string& object,
                        const std::string& old = "null", const std::string& kind = "RunnerSet") {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",
    "kind":{"group":"octorun.io","version":"v1alpha1","kind":")" +
         kind + R"("},"resource":{"group":"octorun.io","version":"v1alpha1","resource":"runnersets"},
    "name":"ci","namespace":"team","operation":")" +
         operation + R"(","userInfo":{"username":"alice"},"object":)" + object + R"(,"oldObject":)" + old +
         R"(,"dryRun":true}})";
}

// The platform's policy in these tests: the manager is "manager".
const admission_policy policy{.runner_creator = "system:serviceaccount:octorun-system:octorun",
                              .scopes = {},
                              .max_runners = 1000,
                              .allow_sets_without_class = false,
                              .classes = {}};

rapidjson::Document response_of(const http_reply& reply) {
  EXPECT_EQ(reply.status, 200) << reply.body;
  auto d = doc(reply.body.c_str());
  EXPECT_TRUE(d.IsObject());
  EXPECT_STREQ(d["apiVersion"].GetString(), "admission.k8s.io/v1");
  EXPECT_STREQ(d["kind"].GetString(), "AdmissionReview");
  return d;
}

std::string base64_decode(const std::string& in) {
  return octorun::base64_decode(in).value_or("<not base64>");
}

TEST(AdmissionReview, ParsesTheRequest) {
  auto req = parse_admission_review(review_json("UPDATE", test::valid_runnerset_json(), R"({"spec":{}})"));
  ASSERT_TRUE(req) << req.error();
  EXPECT_EQ(req->uid, "u-1");
  EXPECT_EQ(req->kind, "RunnerSet");
  EXPECT_EQ(req->group, "octorun.io");
  EXPECT_EQ(req->resource, "runnersets");
  EXPECT_EQ(req->operation, "UPDATE");
  EXPECT_EQ(req->namespace_, "team");
  EXPECT_TRUE(req->dry_run);
  EXPECT_TRUE(req->object.IsObject());
  EXPECT_TRUE(req->old_object.IsObject());
}

TEST(AdmissionReview, RejectsMalformedReviews) {
  for (const std::string& bad :
       {std::string("not json"), std::string("[]"),
        std::string(R"({"apiVersion":"v1","kind":"AdmissionReview"})"),
        std::string(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})"),
        std::string(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":5}})"),
        std::string(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a"}})"),
        std::string(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a",)"
                    R"("operation":"CREATE","object":[1]}})")}) {
    EXPECT_FALSE(parse_admission_review(bad)) << bad;
    EXPECT_EQ(handle_review(endpoint::validate_runnerset, bad, policy).status, 400) << bad;
  }
}

TEST(AdmissionReview, EncodesDenialsWithCauses) {
  admission_response r;
  r.uid = "u\"1";
  r.allowed = false;
  r.code = 422;
  r.reason = "Invalid";
  r.message = "RunnerSet \"ci\" is invalid: spec.x: bad";
  r.causes = {{"spec.x", "bad"}};
  auto d = doc(encode_admission_review(r).c_str());
  ASSERT_TRUE(d.IsObject());
  const auto& resp = d["response"];
  EXPECT_STREQ(resp["uid"].GetString(), "u\"1");
  EXPECT_FALSE(resp["allowed"].GetBool());
  EXPECT_EQ(resp["status"]["code"].GetInt(), 422);
  EXPECT_STREQ(resp["status"]["message"].GetString(), r.message.c_str());
  EXPECT_STREQ(resp["status"]["details"]["causes"][0]["field"].GetString(), "spec.x");
  EXPECT_FALSE(resp.HasMember("patch"));
}

TEST(AdmissionReview, EncodesPatchesAsBase64JsonPatch) {
  admission_response r;
  r.uid = "u";
  r.patch = {{"add", "/spec/minRunners", "0"}, {"remove", "/spec/x", ""}};
  auto d = doc(encode_admission_review(r).c_str());
  const auto& resp = d["response"];
  EXPECT_TRUE(resp["allowed"].GetBool());
  EXPECT_STREQ(resp["patchType"].GetString(), "JSONPatch");
  EXPECT_EQ(base64_decode(resp["patch"].GetString()),
            R"([{"op":"add","path":"/spec/minRunners","value":0},{"op":"remove","path":"/spec/x"}])");
}

TEST(JsonPointer, EscapesReferenceTokens) { EXPECT_EQ(escape_pointer_token("a/b~c"), "a~1b~0c"); }

TEST(Defaults, FillOnlyWhatIsMissing) {
  auto d = doc(R"({"spec":{"minRunners":12,"template":{"spec":{"containers":[]}},
    "variants":[{"name":"a","template":{"spec":{"restartPolicy":"OnFailure"}}},{"name":"b",
    "template":{"spec":{}}}]}})");
  auto ops = runnerset_defaults(d);
  EXPECT_EQ(ops, (std::vector<json_patch_op>{
                     {"add", "/spec/runnerGroup", "\"Default\""},
                     {"add", "/spec/maxRunners", "12"},
                     {"add", "/spec/template/spec/restartPolicy", "\"Never\""},
                     {"add", "/spec/variants/1/template/spec/restartPolicy", "\"Never\""}}));
}

TEST(Defaults, AreIdempotentOnTheSample) {
  auto d = doc(test::valid_runnerset_json());
  auto ops = runnerset_defaults(d);
  EXPECT_EQ(ops.size(), 3u);  // runnerGroup, and restartPolicy in the set and in the large variant
  test::set(d, "/spec/runnerGroup", std::string("Default"));
  test::set(d, "/spec/template/spec/restartPolicy", std::string("Never"));
  test::set(d, "/spec/variants/1/template/spec/restartPolicy", std::string("Never"));
  test::set(d, "/spec/minRunners", 1);
  EXPECT_TRUE(runnerset_defaults(d).empty());
  EXPECT_TRUE(runnerset_defaults(doc("{}")).empty());
  EXPECT_TRUE(runnerset_defaults(doc(R"({"spec":7})")).empty());
}

TEST(Endpoints, MutateAddsDefaults) {
  auto d =
      response_of(handle_review(endpoint::mutate_runnerset, review_json("CREATE", R"({"spec":{}})"), policy));
  const auto& resp = d["response"];
  EXPECT_STREQ(resp["uid"].GetString(), "u-1");
  EXPECT_TRUE(resp["allowed"].GetBool());
  EXPECT_EQ(
      base64_decode(resp["patch"].GetString()),
      R"([{"op":"add","path":"/spec/runnerGroup","value":"Default"},)"
      R"({"op":"add","path":"/spec/minRunners","value":0},{"op":"add","path":"/spec/maxRunners","value":10}])");
}

TEST(Endpoints, ValidateRunnerSetDeniesWithTheFieldAndReason) {
  auto d = doc(test::valid_runnerset_json());
  test::set(d, "/spec/scopeURL", std::string("https://github.com"));
  auto r =
      response_of(handle_review(endpoint::validate_runnerset, review_json("CREATE", test::json(d)), policy));
  const auto& resp = r["response"];
  EXPECT_FALSE(resp["allowed"].GetBool());
  std::string msg = resp["status"]["message"].GetString();
  EXPECT_EQ(
      msg.rfind("RunnerSet \"ci\" is invalid: spec.scopeURL: \"https://github.com\" names no organization",
                0),
      0u)
      << msg;
}

TEST(Endpoints, ValidateRunnerSetAllowsValidDeletingAndDeletedObjects) {
  auto allowed = [](const std::string& body) {
    auto r = response_of(handle_review(endpoint::validate_runnerset, body, policy));
    return r["response"]["allowed"].GetBool();
  };
  EXPECT_TRUE(allowed(review_json("CREATE", test::valid_runnerset_json())));
  EXPECT_TRUE(allowed(review_json("DELETE", "null", test::valid_runnerset_json())));
  EXPECT_TRUE(allowed(review_json("UPDATE", R"({"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z"}})")));
  EXPECT_FALSE(allowed(review_json("UPDATE", R"({"metadata":{}})")));
  EXPECT_FALSE(allowed(review_json("CREATE", R"({"spec":{"minRunners":"one"}})")));
}

TEST(Endpoints, ValidateRunnerGuardsTheSpec) {
  // alice acts as the manager here: only its creates are judged on the spec.
  const admission_policy alice_manages{.runner_creator = "alice",
                                       .scopes = {},
                                       .max_runners = 1000,
                                       .allow_sets_without_class = false,
                                       .classes = {}};
  auto allowed = [&](const std::string& op, const std::string& obj, const std::string& old) {
    auto r = response_of(
        handle_review(endpoint::validate_runner, review_json(op, obj, old, "Runner"), alice_manages));
    return r["response"]["allowed"].GetBool();
  };
  const std::string runner = test::valid_runner_json();
  EXPECT_TRUE(allowed("CREATE", runner, "null"));
  auto labelled = doc(runner.c_str());
  test::set(labelled, "/metadata/labels/x", std::string("y"));
  EXPECT_TRUE(allowed("UPDATE", test::json(labelled), runner));
  auto changed = doc(runner.c_str());
  test::set(changed, "/spec/runnerLabels/0", std::string("windows"));
  EXPECT_FALSE(allowed("UPDATE", test::json(changed), runner));
  EXPECT_FALSE(allowed("CREATE", R"({"metadata":{"name":"r"},"spec":{}})", "null"));
}

// The attack (issue 32): a tenant who may create Runners writes one by hand
// with a set's label and labels of its own; before, the webhook admitted it
// and the manager registered it with the set's credentials. Only the
// manager's own user creates Runners now; nobody else moves one to another
// owner.
TEST(Endpoints, OnlyTheManagerCreatesRunners) {
  const std::string runner = test::valid_runner_json();
  auto reply = [&](const std::string& op, const std::string& obj, const std::string& old) {
    return response_of(handle_review(endpoint::validate_runner, review_json(op, obj, old, "Runner"), policy));
  };
  auto by_alice = reply("CREATE", runner, "null");
  EXPECT_FALSE(by_alice["response"]["allowed"].GetBool());
  EXPECT_EQ(by_alice["response"]["status"]["code"].GetInt(), 403);
  EXPECT_EQ(std::string(by_alice["response"]["status"]["message"].GetString()),
            "Runner \"ci\" is refused: only the Octorun manager "
            "(system:serviceaccount:octorun-system:octorun) creates Runners, not alice: declare a RunnerSet "
            "instead");
  auto as_manager = review_json("CREATE", runner);
  as_manager.replace(as_manager.find("\"alice\""), 7, "\"" + policy.runner_creator + "\"");
  EXPECT_TRUE(response_of(handle_review(endpoint::validate_runner, as_manager, policy))["response"]["allowed"]
                  .GetBool());
  // No manager name known: nobody creates Runners.
  EXPECT_FALSE(response_of(handle_review(endpoint::validate_runner, as_manager,
                                         admission_policy{}))["response"]["allowed"]
                   .GetBool());
  // Re-parenting a Runner the manager made, to hand it to another set.
  auto moved = doc(runner.c_str());
  test::set(moved, "/metadata/ownerReferences",
            doc(R"([{"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","name":"other","uid":"x",)"
                R"("controller":true}])"));
  auto r = reply("UPDATE", test::json(moved), runner);
  EXPECT_FALSE(r["response"]["allowed"].GetBool());
  EXPECT_NE(std::string(r["response"]["status"]["message"].GetString()).find("metadata.ownerReferences"),
            std::string::npos);
  auto labelled = doc(runner.c_str());
  test::set(labelled, "/metadata/labels/x", std::string("y"));
  EXPECT_TRUE(reply("UPDATE", test::json(labelled), runner)["response"]["allowed"].GetBool());
}

// A Runner being deleted (its finalizer still held) is no way around the
// ownership rules: moving it to another set by its ownerReferences or by the
// label that routes it is refused from anyone but the manager, while the
// garbage collector orphaning it (removing references) is not.
TEST(Endpoints, RunnerOwnersAndSetLabelAreTheManagersEvenWhileDeleting) {
  auto owned = doc(test::valid_runner_json());
  test::set(owned, "/metadata/ownerReferences",
            doc(R"([{"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","name":"ci","uid":"ci-uid",)"
                R"("controller":true,"blockOwnerDeletion":true}])"));
  const auto before = test::json(owned);
  auto terminating = doc(before.c_str());
  test::set(terminating, "/metadata/deletionTimestamp", std::string("2026-01-01T00:00:00Z"));
  const auto deleting = test::json(terminating);
  auto reply = [&](const std::string& obj, const std::string& old, const std::string& user = "alice") {
    auto body = review_json("UPDATE", obj, old, "Runner");
    body.replace(body.find("\"alice\""), 7, "\"" + user + "\"");
    return response_of(handle_review(endpoint::validate_runner, body, policy))["response"]["allowed"]
        .GetBool();
  };
  auto moved = doc(deleting.c_str());
  test::set(moved, "/metadata/ownerReferences/0/uid", std::string("other-uid"));
  test::set(moved, "/metadata/ownerReferences/0/name", std::string("other"));
  EXPECT_FALSE(reply(test::json(moved), deleting)) << "re-parented while being deleted";
  auto relabelled = doc(deleting.c_str());
  test::set(relabelled, "/metadata/labels/octorun.io~1runnerset", std::string("other"));
  EXPECT_FALSE(reply(test::json(relabelled), deleting)) << "moved by its label while being deleted";
  auto relabelled_live = doc(before.c_str());
  test::set(relabelled_live, "/metadata/labels/octorun.io~1runnerset", std::string("other"));
  EXPECT_FALSE(reply(test::json(relabelled_live), before)) << "moved by its label";
  auto unlabelled = doc(before.c_str());
  unlabelled["metadata"]["labels"].RemoveMember("octorun.io/runnerset");
  EXPECT_FALSE(reply(test::json(unlabelled), before)) << "the label removed";
  EXPECT_TRUE(reply(test::json(relabelled_live), before, policy.runner_creator)) << "the manager may";
  // The finalizer removed, or the references removed (an orphaning delete): allowed.
  auto released = doc(deleting.c_str());
  test::set(released, "/metadata/finalizers", doc("[]"));
  EXPECT_TRUE(reply(test::json(released), deleting));
  auto orphaned = doc(before.c_str());
  orphaned["metadata"].RemoveMember("ownerReferences");
  EXPECT_TRUE(
      reply(test::json(orphaned), before, "system:serviceaccount:kube-system:generic-garbage-collector"));
  auto emptied = doc(before.c_str());
  test::set(emptied, "/metadata/ownerReferences", doc("[]"));
  EXPECT_TRUE(reply(test::json(emptied), before));
  // Adding a reference where there was none is still refused.
  EXPECT_FALSE(reply(before, test::valid_runner_json()));
}

TEST(WebhookConfiguration, CarriesTheUrlCaBundleAndSelector) {
  webhook_configuration_options o;
  o.name = "octorun-test";
  o.target.url_base = "https://127.0.0.1:4443";
  o.ca_bundle_pem = "PEM";
  o.namespace_selector = {{"octorun.io/test", "abc"}};
  auto v = doc(validating_webhook_configuration(o).c_str());
  ASSERT_TRUE(v.IsObject());
  EXPECT_STREQ(v["kind"].GetString(), "ValidatingWebhookConfiguration");
  ASSERT_EQ(v["webhooks"].Size(), 4u);
  const auto& w = v["webhooks"][0];
  EXPECT_STREQ(w["name"].GetString(), "vrunnerset.octorun.io");
  EXPECT_STREQ(w["clientConfig"]["url"].GetString(), "https://127.0.0.1:4443/validate-runnerset");
  EXPECT_EQ(base64_decode(w["clientConfig"]["caBundle"].GetString()), "PEM");
  EXPECT_STREQ(w["failurePolicy"].GetString(), "Fail");
  EXPECT_STREQ(w["namespaceSelector"]["matchLabels"]["octorun.io/test"].GetString(), "abc");
  EXPECT_STREQ(v["webhooks"][1]["rules"][0]["resources"][0].GetString(), "runners");
  // Runner creates fail closed (only the manager may create one); updates fail open.
  EXPECT_STREQ(v["webhooks"][1]["failurePolicy"].GetString(), "Fail");
  EXPECT_STREQ(v["webhooks"][1]["rules"][0]["operations"][0].GetString(), "CREATE");
  EXPECT_EQ(v["webhooks"][1]["rules"][0]["operations"].Size(), 1u);
  EXPECT_STREQ(v["webhooks"][2]["rules"][0]["resources"][0].GetString(), "runners");
  EXPECT_STREQ(v["webhooks"][2]["rules"][0]["operations"][0].GetString(), "UPDATE");
  EXPECT_STREQ(v["webhooks"][2]["failurePolicy"].GetString(), "Ignore");
  // RunnerClasses are cluster-scoped: a namespaceSelector could not confine their webhook.
  const auto& classes = v["webhooks"][3];
  EXPECT_STREQ(classes["clientConfig"]["url"].GetString(), "https://127.0.0.1:4443/validate-runnerclass");
  EXPECT_STREQ(classes["rules"][0]["resources"][0].GetString(), "runnerclasses");
  EXPECT_STREQ(classes["rules"][0]["scope"].GetString(), "Cluster");
  EXPECT_STREQ(classes["failurePolicy"].GetString(), "Ignore")
      << "a class that breaks a rule is used by no set";
  EXPECT_FALSE(classes.HasMember("namespaceSelector"));
  EXPECT_STREQ(classes["objectSelector"]["matchLabels"]["octorun.io/test"].GetString(), "abc")
      << "confined webhooks judge only the classes labelled for them";

  o.target = {"octorun-system", "octorun-webhook", 443, ""};
  o.ca_bundle_pem.clear();
  auto m = doc(mutating_webhook_configuration(o).c_str());
  ASSERT_EQ(m["webhooks"].Size(), 1u);
  EXPECT_STREQ(m["webhooks"][0]["clientConfig"]["service"]["path"].GetString(), "/mutate-runnerset");
  EXPECT_FALSE(m["webhooks"][0]["clientConfig"].HasMember("caBundle"));
}

TEST(WebhookConfiguration, CaBundlePatchCoversEachWebhook) {
  EXPECT_EQ(ca_bundle_patch("PEM", 2),
            R"([{"op":"add","path":"/webhooks/0/clientConfig/caBundle","value":"UEVN"},)"
            R"({"op":"add","path":"/webhooks/1/clientConfig/caBundle","value":"UEVN"}])");
}

}  // namespace
}  // namespace octorun::admission
