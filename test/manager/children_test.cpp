// The objects the manager creates: a RunnerSet's Runners, a Runner's JIT
// Secret and Pod. Shapes are checked here; the apiserver accepts them in
// children_apiserver_test.cpp.
#include "actors/runner/children.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <optional>

#include "actors/runner/observe.hpp"
#include "actors/runnerset/runner_object.hpp"
#include "model/naming.hpp"
#include "model/parse.hpp"
#include "model/pod_config.hpp"
#include "test/support/json.hpp"
#include "test/support/runner_spec.hpp"

namespace octorun {
namespace {

using test::own_spec;
using test::parse_json;

model::runner sample_runner(const std::string& template_json) {
  return test::runner_with_template(template_json);
}

const std::string tmpl =
    R"({"metadata":{"labels":{"team":"infra"},"annotations":{"a":"b"}},)"
    R"("spec":{"containers":[{"name":"sidecar","image":"busybox"},)"
    R"({"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0",)"
    R"("env":[{"name":"KEEP","value":"1"},{"name":"ACTIONS_RUNNER_INPUT_JITCONFIG","value":"leak"}]}]}})";

TEST(RunnerPod, CarriesTheTemplateOwnerLabelsAndTheJitConfigFromTheSecret) {
  auto pod_or = runner::pod_json(sample_runner(tmpl), "octorun/0.1.0");
  ASSERT_TRUE(pod_or) << pod_or.error();
  auto pod = parse_json(*pod_or);
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
  ASSERT_EQ(env.Size(), 4u);
  EXPECT_STREQ(env[0]["name"].GetString(), "KEEP");
  EXPECT_STREQ(env[1]["name"].GetString(), "ACTIONS_RUNNER_INPUT_JITCONFIG");
  EXPECT_FALSE(env[1].HasMember("value")) << "the JIT configuration must come from the Secret";
  EXPECT_STREQ(env[1]["valueFrom"]["secretKeyRef"]["name"].GetString(), "linux-large-x7k2p-jit");
  EXPECT_STREQ(env[2]["value"].GetString(), "octorun/0.1.0");
  // Refused as deprecated, the runner exits 7 (an Outdated Runner), not 0.
  EXPECT_STREQ(env[3]["name"].GetString(), "ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE");
  EXPECT_STREQ(env[3]["value"].GetString(), "1");
  EXPECT_FALSE(pod["spec"]["containers"][0].HasMember("env")) << "only the runner container is touched";
}

TEST(RunnerPod, KeepsATemplatesOwnRestartPolicyAndIsDeterministic) {
  auto t = R"({"spec":{"restartPolicy":"OnFailure","containers":[{"name":"runner","image":"r"}]}})";
  auto a = runner::pod_json(sample_runner(t), "ua");
  ASSERT_TRUE(a);
  EXPECT_STREQ(parse_json(*a)["spec"]["restartPolicy"].GetString(), "OnFailure");
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
  auto secret = parse_json(runner::jit_secret_json(r, {"opaque-jit", 42, "linux-large-x7k2p"}));
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
  EXPECT_FALSE(runner::read_jit_secret(parse_json(R"({"data":{"jitConfig":"!!!"}})")));
}

// A new Runner may get the name of an earlier one whose Pod and Secret are
// still there: the owner they name, read back as the informers read it, tells
// them apart (their pod's state and their JIT configuration are not its own).
TEST(RunnerChildren, AreTheirRunnersByOwnerUidNotByName) {
  auto r = sample_runner(tmpl);
  auto pod_or = runner::pod_json(r, "octorun/0.1.0");
  ASSERT_TRUE(pod_or) << pod_or.error();
  const auto pod = model::read_runner_pod(parse_json(*pod_or));
  const auto secret = model::read_jit_secret_view(
      parse_json(runner::jit_secret_json(r, {"opaque-jit", 42, "linux-large-x7k2p"})));
  EXPECT_EQ(pod.metadata.owner_uid, "uid-1");
  EXPECT_EQ(secret.metadata.owner_uid, "uid-1");
  EXPECT_TRUE(model::owned_by(pod.metadata, r.metadata.uid));
  EXPECT_TRUE(model::owned_by(secret.metadata, r.metadata.uid));

  auto successor = r;  // the same name, made after r was deleted
  successor.metadata.uid = "uid-2";
  EXPECT_FALSE(model::owned_by(pod.metadata, successor.metadata.uid));
  EXPECT_FALSE(model::owned_by(secret.metadata, successor.metadata.uid));

  // Only the controller reference names the owner; none at all: taken as its own.
  const auto other = model::read_runner_pod(parse_json(
      R"({"metadata":{"name":"linux-large-x7k2p","ownerReferences":[{"kind":"Runner","uid":"uid-1"}]}})"));
  EXPECT_EQ(other.metadata.owner_uid, "");
  EXPECT_TRUE(model::owned_by(other.metadata, successor.metadata.uid));
}

// Only a Pod whose controller is a Runner of ours is a set's (the Pod
// informer keeps no other: controller/owned_routing.hpp).
TEST(RunnerChildren, APodsControllerIsARunnerOnlyWhenItsKindAndGroupSaySo) {
  auto pod_or = runner::pod_json(sample_runner(tmpl), "octorun/0.1.0");
  ASSERT_TRUE(pod_or) << pod_or.error();
  EXPECT_TRUE(model::read_runner_pod(parse_json(*pod_or)).metadata.owner_is_runner) << "the manager's own";
  auto owned_by = [](const std::string& reference) {
    return model::read_runner_pod(
               parse_json(R"({"metadata":{"name":"p","ownerReferences":[)" + reference + "]}}"))
        .metadata.owner_is_runner;
  };
  EXPECT_TRUE(
      owned_by(R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","uid":"u","controller":true})"));
  EXPECT_FALSE(owned_by(R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","uid":"u"})"))
      << "not its controller";
  EXPECT_FALSE(owned_by(R"({"apiVersion":"example.com/v1","kind":"Runner","uid":"u","controller":true})"))
      << "another group's Runner";
  EXPECT_FALSE(
      owned_by(R"({"apiVersion":"octorun.io.example.com/v1","kind":"Runner","uid":"u","controller":true})"));
  EXPECT_FALSE(owned_by(R"({"apiVersion":"apps/v1","kind":"ReplicaSet","uid":"u","controller":true})"));
  EXPECT_FALSE(model::read_runner_pod(parse_json(R"({"metadata":{"name":"p"}})")).metadata.owner_is_runner);
}

// A set being deleted waits for the Runners the apiserver lists with its
// label, but only for those it made: a hand-made one (no controller) or
// another set's is left alone, and must not hold the deletion for good.
TEST(RunnerChildren, ASetsDeletionWaitsOnlyForTheRunnersItMade) {
  const auto hand_made = model::read_object_meta(
      parse_json(R"({"metadata":{"name":"linux-hand1","labels":{"octorun.io/runnerset":"linux"}}})"));
  const auto other_sets = model::read_object_meta(
      parse_json(R"({"metadata":{"name":"linux-forg1","ownerReferences":[)"
                 R"({"kind":"RunnerSet","name":"linux","uid":"other-uid","controller":true}]}})"));
  const auto its_own = model::read_object_meta(
      parse_json(R"({"metadata":{"name":"linux-ownd1","ownerReferences":[)"
                 R"({"kind":"RunnerSet","name":"linux","uid":"set-uid","controller":true}]}})"));
  EXPECT_EQ(its_own.owner_uid, "set-uid");
  EXPECT_TRUE(model::no_runner_made_by({}, "set-uid"));
  EXPECT_TRUE(model::no_runner_made_by({hand_made, other_sets}, "set-uid"));
  EXPECT_FALSE(model::no_runner_made_by({hand_made, its_own}, "set-uid"));
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
  auto r = parse_json(runnerset::runner_json(*set, variants[0], "x7k2p"));
  EXPECT_STREQ(r["metadata"]["name"].GetString(), "linux-large-x7k2p");
  EXPECT_STREQ(r["metadata"]["ownerReferences"][0]["kind"].GetString(), "RunnerSet");
  EXPECT_STREQ(r["metadata"]["ownerReferences"][0]["uid"].GetString(), "set-uid");
  EXPECT_STREQ(r["metadata"]["labels"]["octorun.io/variant"].GetString(), "large");
  EXPECT_EQ(r["spec"]["runnerLabels"].Size(), 2u);
  EXPECT_STREQ(r["spec"]["template"]["spec"]["containers"][0]["image"].GetString(), "big");
  EXPECT_STREQ(r["spec"]["scopeURL"].GetString(), "https://github.com/acme");
}

// ---- what the pod gets besides its template (pod_features.hpp) ------------------

const rapidjson::Value* find(const rapidjson::Value& list, const char* name) {
  for (const auto& item : list.GetArray())
    if (std::string_view(item["name"].GetString()) == name) return &item;
  return nullptr;
}

TEST(RunnerPod, TheActionsRunnerImageGetsRunShUnlessTheTemplateSaysHowToStart) {
  auto command_of = [](const std::string& container) {
    auto pod = runner::pod_json(sample_runner(R"({"spec":{"containers":[)" + container + "]}}"), "ua");
    EXPECT_TRUE(pod);
    auto d = parse_json(*pod);
    const auto& c = d["spec"]["containers"][0];
    return c.HasMember("command") ? std::string(c["command"][0].GetString()) : std::string("(none)");
  };
  EXPECT_EQ(command_of(R"({"name":"runner","image":"ghcr.io/actions/actions-runner:2.330.0"})"),
            "/home/runner/run.sh");
  EXPECT_EQ(command_of(R"({"name":"runner","image":"ghcr.io/actions/actions-runner@sha256:abc"})"),
            "/home/runner/run.sh");
  EXPECT_EQ(command_of(R"({"name":"runner","image":"ghcr.io/actions/actions-runner"})"),
            "/home/runner/run.sh");
  // Another image has its own entry point; the template's command or args win.
  EXPECT_EQ(command_of(R"({"name":"runner","image":"registry.corp/runner:1"})"), "(none)");
  EXPECT_EQ(command_of(R"({"name":"runner","image":"ghcr.io/actions/actions-runner-dind:1"})"), "(none)");
  EXPECT_EQ(command_of(R"({"name":"runner","image":"ghcr.io/actions/actions-runner:2","command":["/x"]})"),
            "/x");
  EXPECT_EQ(command_of(R"({"name":"runner","image":"ghcr.io/actions/actions-runner:2","args":["--once"]})"),
            "(none)");
}

TEST(RunnerPod, RunsAsTheSetsServiceAccountUnlessTheTemplateNamesOne) {
  auto sa = [](const std::string& spec_extra, const std::string& set) {
    auto r = sample_runner(R"({"spec":{)" + spec_extra + R"("containers":[{"name":"runner","image":"r"}]}})");
    own_spec(r).runner_set_name = set;
    auto d = parse_json(*runner::pod_json(r, "ua"));
    return d["spec"].HasMember("serviceAccountName")
               ? std::string(d["spec"]["serviceAccountName"].GetString())
               : std::string("(default)");
  };
  EXPECT_EQ(sa("", "linux"), "octorun-runner-linux");
  EXPECT_EQ(sa(R"("serviceAccountName":"ci-bot",)", "linux"), "ci-bot");
  EXPECT_EQ(sa("", ""), "(default)") << "a Runner made by hand has no set";
}

// Only kubernetes mode calls the API from the runner pod: every other pod
// mounts no token, whichever ServiceAccount it runs as, unless its template
// asks for one.
TEST(RunnerPod, MountsNoTokenUnlessKubernetesModeOrTheTemplateAsksForOne) {
  auto token = [](const std::string& spec_extra, std::optional<model::container_mode> mode) {
    auto r = sample_runner(R"({"spec":{)" + spec_extra + R"("containers":[{"name":"runner","image":"r"}]}})");
    own_spec(r).runner_set_name = "linux";
    if (mode) own_spec(r).pod.container_mode = model::container_mode_spec{*mode, ""};
    auto d = parse_json(*runner::pod_json(r, "ua"));
    return d["spec"]["automountServiceAccountToken"].GetBool();
  };
  EXPECT_FALSE(token("", std::nullopt));
  EXPECT_FALSE(token(R"("serviceAccountName":"ci-bot",)", std::nullopt)) << "one of the namespace's";
  EXPECT_FALSE(token("", model::container_mode::dind));
  EXPECT_TRUE(token("", model::container_mode::kubernetes)) << "the hooks call the API";
  EXPECT_TRUE(token(R"("automountServiceAccountToken":true,)", std::nullopt)) << "the template's choice";
  EXPECT_TRUE(token(R"("automountServiceAccountToken":true,)", model::container_mode::dind));
}

TEST(RunnerPod, ContainerModesAddOnlyWhatTheTemplateLacks) {
  auto r = sample_runner(
      R"({"spec":{"containers":[{"name":"runner","image":"ghcr.io/actions/actions-runner:2",)"
      R"("env":[{"name":"DOCKER_HOST","value":"tcp://mine:2375"}],"volumeMounts":[{"name":"work","mountPath":"/w"}]}],)"
      R"("initContainers":[{"name":"setup","image":"busybox"}],"volumes":[{"name":"work","hostPath":{"path":"/x"}}]}})");
  own_spec(r).pod.container_mode = model::container_mode_spec{model::container_mode::dind, ""};
  auto d = parse_json(*runner::pod_json(r, "ua"));
  const auto& spec = d["spec"];
  const auto& inits = spec["initContainers"];
  ASSERT_EQ(inits.Size(), 3u);
  EXPECT_STREQ(inits[0]["name"].GetString(), "init-dind-externals");
  EXPECT_STREQ(inits[1]["name"].GetString(), "dind");
  EXPECT_STREQ(inits[1]["restartPolicy"].GetString(), "Always") << "a native sidecar";
  EXPECT_TRUE(inits[1]["securityContext"]["privileged"].GetBool());
  EXPECT_STREQ(inits[2]["name"].GetString(), "setup")
      << "the template's own init containers run after the daemon";
  const auto& runner = spec["containers"][0];
  EXPECT_FALSE(runner.HasMember("securityContext")) << "privileged only where it must be";
  EXPECT_STREQ(find(runner["env"], "DOCKER_HOST")->operator[]("value").GetString(), "tcp://mine:2375");
  EXPECT_STREQ(find(runner["volumeMounts"], "work")->operator[]("mountPath").GetString(), "/w");
  EXPECT_TRUE(find(spec["volumes"], "work")->HasMember("hostPath")) << "the template's work volume stays";
  EXPECT_TRUE(find(spec["volumes"], "dind-sock")->HasMember("emptyDir"));

  // A template that declares its own daemon keeps it.
  auto own = sample_runner(
      R"({"spec":{"containers":[{"name":"runner","image":"r"},{"name":"dind","image":"docker:27-dind"}]}})");
  own_spec(own).pod.container_mode = model::container_mode_spec{model::container_mode::dind, ""};
  auto o = parse_json(*runner::pod_json(own, "ua"));
  EXPECT_EQ(o["spec"]["containers"].Size(), 2u);
  ASSERT_EQ(o["spec"]["initContainers"].Size(), 1u);
  EXPECT_STREQ(o["spec"]["initContainers"][0]["name"].GetString(), "init-dind-externals");
}

TEST(RunnerPod, KubernetesModeMountsTheTokenAndKeepsATemplatesSecurityContext) {
  auto r = sample_runner(
      R"({"spec":{"automountServiceAccountToken":false,"securityContext":{"runAsUser":1001,"fsGroup":1001},)"
      R"("containers":[{"name":"runner","image":"r"}]}})");
  own_spec(r).pod.container_mode = model::container_mode_spec{model::container_mode::kubernetes, ""};
  auto d = parse_json(*runner::pod_json(r, "ua"));
  EXPECT_FALSE(d["spec"]["automountServiceAccountToken"].GetBool());
  EXPECT_EQ(d["spec"]["securityContext"]["fsGroup"].GetInt(), 1001);
  const auto& work = *find(d["spec"]["volumes"], "work");
  EXPECT_STREQ(
      work["ephemeral"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"].GetString(),
      "1Gi");
}

TEST(RunnerPod, ProxyCredentialsAreReferencedNeverWritten) {
  auto r = sample_runner(tmpl);
  own_spec(r).pod.proxy =
      model::proxy_spec{std::nullopt, model::proxy_endpoint{"https://proxy:8443/", "creds"}, {"a", "b"}};
  auto d = parse_json(*runner::pod_json(r, "ua"));
  const auto& env = d["spec"]["containers"][1]["env"];
  EXPECT_STREQ(find(env, "https_proxy")->operator[]("value").GetString(),
               "https://$(OCTORUN_HTTPS_PROXY_USERNAME):$(OCTORUN_HTTPS_PROXY_PASSWORD)@proxy:8443");
  EXPECT_STREQ(
      find(env, "OCTORUN_HTTPS_PROXY_PASSWORD")->operator[]("valueFrom")["secretKeyRef"]["key"].GetString(),
      "password");
  EXPECT_STREQ(find(env, "NO_PROXY")->operator[]("value").GetString(), "a,b");
  EXPECT_EQ(find(env, "http_proxy"), nullptr);
}

TEST(RunnerPod, SafeToEvictIsTrueWhileIdleWhenManagedAndTheTemplateWins) {
  auto r = sample_runner(tmpl);
  auto annotation = [](const model::runner& r) {
    auto d = parse_json(*runner::pod_json(r, "ua"));
    const auto& a = d["metadata"]["annotations"];
    return a.HasMember(model::annotation_safe_to_evict)
               ? std::string(a[model::annotation_safe_to_evict].GetString())
               : std::string("(unset)");
  };
  EXPECT_EQ(annotation(r), "(unset)");
  own_spec(r).pod.manage_safe_to_evict = true;
  EXPECT_EQ(annotation(r), "true");
  EXPECT_EQ(
      runner::busy_pod_patch(r),
      R"({"metadata":{"labels":{"octorun.io/busy":"true"},"annotations":{)"
      R"("cluster-autoscaler.kubernetes.io/safe-to-evict":"false","karpenter.sh/do-not-disrupt":"true"}}})");
  auto& annotated = own_spec(r).template_;
  annotated.annotations[model::annotation_safe_to_evict] = "true";
  EXPECT_EQ(
      runner::busy_pod_patch(r),
      R"({"metadata":{"labels":{"octorun.io/busy":"true"},"annotations":{"karpenter.sh/do-not-disrupt":"true"}}})");
}

// Karpenter may consolidate an idle runner's node (its Runner makes a new
// pod elsewhere), never a busy one's: the veto comes with the job, in the
// same patch, and a template that sets the annotation keeps its own value.
TEST(RunnerPod, DoNotDisruptComesWithTheJobOnlyAndTheTemplateWins) {
  auto r = sample_runner(tmpl);
  own_spec(r).pod.manage_safe_to_evict = true;  // the idle pod's one autoscaler annotation
  auto idle = parse_json(*runner::pod_json(r, "ua"));
  EXPECT_FALSE(idle["metadata"]["annotations"].HasMember(model::annotation_do_not_disrupt));
  auto busy = parse_json(runner::busy_pod_patch(r));
  EXPECT_STREQ(busy["metadata"]["annotations"][model::annotation_do_not_disrupt].GetString(), "true");

  // As the template parser fills both: the JSON the pod is built from, and
  // the annotations busy_pod_patch reads.
  auto own = sample_runner(R"({"metadata":{"annotations":{"karpenter.sh/do-not-disrupt":"30m"}},)"
                           R"("spec":{"containers":[{"name":"runner","image":"r"}]}})");
  own_spec(own).template_.annotations[model::annotation_do_not_disrupt] = "30m";
  idle = parse_json(*runner::pod_json(own, "ua"));
  EXPECT_STREQ(idle["metadata"]["annotations"][model::annotation_do_not_disrupt].GetString(), "30m");
  EXPECT_EQ(
      runner::busy_pod_patch(own),
      R"({"metadata":{"labels":{"octorun.io/busy":"true"},"annotations":{"cluster-autoscaler.kubernetes.io/safe-to-evict":"false"}}})");
}

TEST(RunnerObject, CarriesThePodConfigurationOnlyWhenTheSetHasOne) {
  auto set = model::parse_runnerset(std::string(
      R"({"metadata":{"name":"linux","namespace":"ci","uid":"u"},"spec":{"scopeURL":"https://github.com/acme",)"
      R"("credentialsSecretName":"gh","template":{"spec":{"containers":[{"name":"runner","image":"r"}]}},)"
      R"("manageSafeToEvict":true,"variants":[{"name":"a","runnerLabels":["a"],"containerMode":{"type":"dind"}}]}})"));
  ASSERT_TRUE(set);
  auto v = model::effective_variants(set->spec);
  auto back = model::parse_runner(runnerset::runner_json(*set, v[0], "x7k2p"));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->spec->pod, v[0].pod) << "a Runner reads back what its variant declared";
  EXPECT_EQ(model::pod_fingerprint(back->spec->template_, back->spec->pod),
            model::pod_fingerprint(*v[0].template_, v[0].pod));
}

}  // namespace
}  // namespace octorun
