// The real kube-apiserver calls our webhook over HTTPS: CRDs installed, the
// server in-process on 127.0.0.1:0 with its own CA, webhook configurations
// (from the same pure function the manager uses) scoped to this test's
// namespace so no other test sharing the cluster is affected.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "adapters/admission/ca_injection.hpp"
#include "adapters/admission/identity.hpp"
#include "adapters/admission/webhook_configuration.hpp"
#include "adapters/admission/webhook_server.hpp"
#include "common/base64.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"

#ifndef OCTORUN_DEPLOY_DIR
#error "OCTORUN_DEPLOY_DIR must name deploy/"
#endif

namespace octorun::admission {
namespace {

namespace fs = std::filesystem;
using test::cluster;
using test::cluster_info;
using namespace std::chrono_literals;

struct outcome {
  bool ok;
  std::string output;  // stdout and stderr
};

outcome run(const std::string& args) {
  try {
    return {true, test::kubectl(cluster(), args + " 2>&1")};
  } catch (const std::runtime_error& e) {
    return {false, e.what()};
  }
}

std::string write_temp(const std::string& dir, const std::string& name, const std::string& content) {
  auto path = dir + "/" + name;
  std::ofstream(path) << content;
  return path;
}

// A server-side dry run of `args` as "admitted: <output>" or "denied: <output>".
std::string dry_run(const std::string& args) {
  auto r = run(args + " --dry-run=server");
  return (r.ok ? "admitted: " : "denied: ") + r.output;
}

std::string runnerset_yaml(const std::string& ns, const std::string& name, const std::string& spec_extra = "",
                           const std::string& scope = "https://github.com/acme/app",
                           const std::string& container = "runner") {
  return "apiVersion: octorun.io/v1alpha1\nkind: RunnerSet\nmetadata:\n  name: " + name +
         "\n  namespace: " + ns + "\nspec:\n  scopeURL: " + scope +
         "\n  credentialsSecretName: github-app\n  runnerLabels: [linux]\n  template:\n    spec:\n"
         "      containers:\n      - name: " +
         container + "\n        image: ghcr.io/actions/actions-runner:latest\n" + spec_extra;
}

std::string runner_yaml(const std::string& ns, const std::string& name) {
  return "apiVersion: octorun.io/v1alpha1\nkind: Runner\nmetadata:\n  name: " + name +
         "\n  namespace: " + ns +
         "\nspec:\n  scopeURL: https://github.com/acme/app\n  credentialsSecretName: github-app\n"
         "  template:\n    spec:\n      containers:\n      - name: runner\n        image: runner:1\n";
}

// One webhook server + configuration pair bound to one labelled namespace.
class webhook_under_test {
 public:
  void start(const std::string& tag) {
    char tmpl[] = "/tmp/octorun-admission-it-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    ns = test::make_namespace(cluster(), tag);
    ASSERT_TRUE(run("label namespace " + ns + " octorun.io/admission-test=" + ns).ok);
    self_signed_config certs;
    certs.dir = dir + "/certs";
    certs.ip_addresses = {"127.0.0.1"};
    auto kube_config = kube::load_kubeconfig(cluster().kubeconfig);
    ASSERT_TRUE(kube_config) << kube_config.error();
    kube::client api(*kube_config);
    webhook_server_options o;
    o.bind_address = "127.0.0.1";
    // The test's own user plays the manager: the one that may create Runners.
    auto me = own_username(api);
    ASSERT_TRUE(me) << me.error();
    o.policy.runner_creator = *me;
    auto srv = webhook_server::start(o, certificate_source::self_signed(certs));
    ASSERT_TRUE(srv) << srv.error();
    server = std::move(*srv);

    webhook_configuration_options config;
    config.name = "octorun-" + ns;
    config.target.url_base = "https://127.0.0.1:" + std::to_string(server->port());
    // No caBundle in the objects: injected below the way the manager does it.
    config.namespace_selector = {{"octorun.io/admission-test", ns}};
    auto m = write_temp(dir, "mutating.json", mutating_webhook_configuration(config));
    auto v = write_temp(dir, "validating.json", validating_webhook_configuration(config));
    auto created = run("create -f " + m + " -f " + v);
    ASSERT_TRUE(created.ok) << created.output;
    configurations =
        "mutatingwebhookconfiguration/" + config.name + " validatingwebhookconfiguration/" + config.name;
    name = config.name;
    auto injected = inject_ca_bundle(api, name, server->ca_bundle());
    ASSERT_TRUE(injected) << injected.error();
    wait_until_in_effect();
  }

  // Teardown order matters: configurations first, then the server.
  void stop() {
    if (!configurations.empty()) run("delete " + configurations + " --ignore-not-found");
    configurations.clear();
    server.reset();
    if (!ns.empty()) run("delete namespace " + ns + " --wait=false");
    if (!dir.empty()) fs::remove_all(dir);
  }

  std::string apply(const std::string& name, const std::string& yaml, const std::string& verb = "create") {
    return verb + " -f " + write_temp(dir, name + ".yaml", yaml);
  }

  std::unique_ptr<webhook_server> server;
  std::string ns;
  std::string dir;
  std::string configurations;
  std::string name;  // of both webhook configurations

 private:
  void wait_until_in_effect() {
    // Each webhook is in effect once a server-side dry run shows its effect.
    // Webhook configurations reach the apiserver through an informer, so
    // their effect is observed rather than slept for.
    auto denied_with = [](const std::string& reason) {
      return [reason](const std::string& o) {
        return o.starts_with("denied: ") && o.find(reason) != std::string::npos;
      };
    };
    auto bad_set = apply("probe-set", runnerset_yaml(ns, "probe", "", "https://github.com"));
    test::wait_for([&] { return dry_run(bad_set); }, denied_with("names no organization"), 60s,
                   "the validating webhook for RunnerSets to take effect");
    auto good_set = apply("probe-good", runnerset_yaml(ns, "probe"));
    test::wait_for_value([&] { return dry_run(good_set + " -o jsonpath={.spec.runnerGroup}"); },
                         std::string("admitted: Default"), 60s, "the mutating webhook to take effect");
    auto long_runner = apply("probe-runner", runner_yaml(ns, std::string(64, 'r')));
    test::wait_for([&] { return dry_run(long_runner); }, denied_with("is 1 character too long"), 60s,
                   "the validating webhook for Runners to take effect");
    auto bad_class = apply("probe-class", class_yaml("probe", "https://*.com"));
    test::wait_for([&] { return dry_run(bad_class); }, denied_with("two labels or more"), 60s,
                   "the validating webhook for RunnerClasses to take effect");
  }

 public:
  // A RunnerClass labelled for this webhook (its objectSelector): classes
  // are cluster-wide, and other tests' managers judge their own.
  std::string class_yaml(const std::string& name, const std::string& server) const {
    return "apiVersion: octorun.io/v1alpha1\nkind: RunnerClass\nmetadata:\n  name: " + ns + "-" + name +
           "\n  labels: {octorun.io/admission-test: " + ns + "}\nspec:\n  namespaceSelector: {}\n" +
           "  github:\n    servers: [\"" + server + "\"]\n    credentialsSecretName: pat\n";
  }
};

class Admission : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    test::install_crds(cluster());  // retries a concurrent apply, waits for Established
    webhook = new webhook_under_test;
    webhook->start("admission");
  }
  static void TearDownTestSuite() {
    if (webhook != nullptr) webhook->stop();
    delete webhook;
    webhook = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(webhook, nullptr);
    ASSERT_NE(webhook->server, nullptr);
  }
  static webhook_under_test* webhook;
};
webhook_under_test* Admission::webhook = nullptr;

TEST_F(Admission, AcceptsAValidRunnerSetAndStoresItsDefaults) {
  auto& w = *webhook;
  auto created = run(w.apply("valid", runnerset_yaml(w.ns, "ci",
                                                     "  variants:\n  - name: small\n    runnerLabels: "
                                                     "[small]\n  - name: large\n    runnerLabels: [large]"
                                                     "\n    maxRunners: 2\n")));
  ASSERT_TRUE(created.ok) << created.output;
  auto read = run("get runnerset ci -n " + w.ns + " -o json");
  ASSERT_TRUE(read.ok) << read.output;
  rapidjson::Document d;
  d.Parse(read.output.c_str());
  ASSERT_TRUE(d.IsObject()) << read.output;
  const auto& spec = d["spec"];
  EXPECT_STREQ(spec["runnerGroup"].GetString(), "Default");
  EXPECT_EQ(spec["minRunners"].GetInt(), 0);
  EXPECT_EQ(spec["maxRunners"].GetInt(), 10);
  EXPECT_STREQ(spec["template"]["spec"]["restartPolicy"].GetString(), "Never");
  EXPECT_EQ(spec["variants"].Size(), 2u);
  // The category lists both kinds; the scale subresource writes spec.replicas.
  EXPECT_TRUE(run("get octorun -n " + w.ns).output.find("runnerset.octorun.io/ci") != std::string::npos);
  ASSERT_TRUE(run("scale runnerset/ci --replicas=3 -n " + w.ns).ok);
  EXPECT_EQ(run("get rset ci -n " + w.ns + " -o jsonpath={.spec.replicas}").output, "3");
}

TEST_F(Admission, InjectsTheCaBundleIntoEveryWebhook) {
  auto& w = *webhook;
  const auto expected = base64_encode(w.server->ca_bundle());
  for (const char* kind : {"mutatingwebhookconfiguration", "validatingwebhookconfiguration"}) {
    auto read = run(std::string("get ") + kind + " " + w.name + " -o json");
    ASSERT_TRUE(read.ok) << read.output;
    rapidjson::Document d;
    d.Parse(read.output.c_str());
    ASSERT_TRUE(d.IsObject() && d.HasMember("webhooks") && d["webhooks"].IsArray()) << read.output;
    // Validating: RunnerSets, Runner creates, Runner updates, RunnerClasses.
    EXPECT_EQ(d["webhooks"].Size(), std::string(kind).starts_with("mutating") ? 1u : 4u) << kind;
    for (const auto& hook : d["webhooks"].GetArray())
      EXPECT_EQ(std::string(hook["clientConfig"]["caBundle"].GetString()), expected) << kind;
  }
  // Injecting again (after a rotation) is harmless.
  auto kube_config = kube::load_kubeconfig(cluster().kubeconfig);
  ASSERT_TRUE(kube_config);
  kube::client api(*kube_config);
  auto again = inject_ca_bundle(api, w.name, w.server->ca_bundle());
  EXPECT_TRUE(again) << again.error();
  auto missing = inject_ca_bundle(api, "octorun-no-such-configuration", w.server->ca_bundle());
  EXPECT_FALSE(missing);
}

TEST_F(Admission, RejectsEachInvalidRunnerSetWithItsReason) {
  auto& w = *webhook;
  struct bad_case {
    const char* what;
    std::string yaml;
    std::string message;
  };
  const std::vector<bad_case> cases = {
      {"scope URL", runnerset_yaml(w.ns, "bad-url", "", "https://github.com/acme/app/tree/main"),
       "spec.scopeURL: \"https://github.com/acme/app/tree/main\" has too many path segments"},
      {"min > max", runnerset_yaml(w.ns, "bad-counts", "  minRunners: 4\n  maxRunners: 2\n"),
       "spec.minRunners must not exceed spec.maxRunners"},
      {"duplicate variant names",
       runnerset_yaml(w.ns, "bad-dup", "  variants:\n  - name: small\n  - name: small\n"), "Duplicate value"},
      {"non-DNS variant name", runnerset_yaml(w.ns, "bad-variant", "  variants:\n  - name: Small_1\n"),
       "spec.variants[0].name"},
      {"set name too long for its runners", runnerset_yaml(w.ns, std::string(60, 'n'), ""),
       "metadata.name: is 3 characters too long: generated Runner names"},
      {"variant name too long for its runners",
       runnerset_yaml(w.ns, std::string(40, 'n'), "  variants:\n  - name: " + std::string(20, 'v') + "\n"),
       "spec.variants[0].name: is 4 characters too long"},
      {"template without a runner container",
       runnerset_yaml(w.ns, "bad-template", "", "https://github.com/acme", "main"),
       "must include a container named \"runner\""},
      {"restartPolicy Always", runnerset_yaml(w.ns, "bad-restart", "      restartPolicy: Always\n"),
       "spec.template.spec.restartPolicy: \"Always\" is not allowed"},
  };
  for (const auto& c : cases) {
    auto r = run(w.apply("bad", c.yaml));
    EXPECT_FALSE(r.ok) << c.what << " was accepted";
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.what << ": " << r.output;
  }
}

TEST_F(Admission, RejectsRunnerSpecChangesAndAllowsMetadataAndStatus) {
  auto& w = *webhook;
  auto created = run(w.apply("runner", runner_yaml(w.ns, "ci-abcde")));
  ASSERT_TRUE(created.ok) << created.output;
  const std::string target = "runner/ci-abcde -n " + w.ns;
  auto spec_change = run("patch " + target + R"( --type=merge -p '{"spec":{"runnerGroup":"gpu"}}')");
  EXPECT_FALSE(spec_change.ok);
  EXPECT_NE(spec_change.output.find("immutable"), std::string::npos) << spec_change.output;
  EXPECT_TRUE(run("label " + target + " team=ci").ok);
  EXPECT_TRUE(run("annotate " + target + " note=hello").ok);
  auto status =
      run("patch " + target +
          R"( --subresource=status --type=merge -p '{"status":{"phase":"Pending","runnerId":17}}')");
  EXPECT_TRUE(status.ok) << status.output;
  EXPECT_EQ(run("get " + target + " -o jsonpath={.status.runnerId}").output, "17");
}

// The attack (issue 32): a user allowed to create Runners writes one by
// hand; only the manager's user may. (system:masters lets the request past
// RBAC, so the webhook is what refuses it.)
TEST_F(Admission, RefusesARunnerCreatedByAnyoneButTheManager) {
  auto& w = *webhook;
  auto r =
      run(w.apply("hand-made", runner_yaml(w.ns, "ci-hand1")) + " --as=tenant --as-group=system:masters");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.output.find("only the Octorun manager"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not tenant"), std::string::npos) << r.output;
}

TEST_F(Admission, RefusesAnInvalidRunnerClassNamingTheFieldAndTheRule) {
  auto& w = *webhook;
  auto r = run(w.apply("bad-class", w.class_yaml("bad", "http://ghes.corp.example")) + " --dry-run=server");
  EXPECT_FALSE(r.ok);
  // kubectl prints the causes of a 422: the field and the rule.
  EXPECT_NE(r.output.find("spec.github.servers[0]: \"http://ghes.corp.example\""), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("must start with https://"), std::string::npos) << r.output;
  auto good =
      run(w.apply("good-class", w.class_yaml("good", "https://ghes.corp.example")) + " --dry-run=server");
  EXPECT_TRUE(good.ok) << good.output;
}

TEST_F(Admission, RejectsAnInvalidRunner) {
  auto& w = *webhook;
  auto yaml = runner_yaml(w.ns, "bad-runner");
  yaml.replace(yaml.find("https://github.com/acme/app"), 27, "https://github.com");
  auto r = run(w.apply("bad-runner", yaml));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.output.find("spec.scopeURL"), std::string::npos) << r.output;
}

// failurePolicy (README.md): RunnerSet writes and Runner creates fail
// closed while no webhook answers; Runner updates go on (their immutability
// is also a CEL rule).
TEST(AdmissionWebhookDown, RunnerSetsFailClosedAndRunnersStayWritable) {
  webhook_under_test w;
  w.start("admission-down");
  ASSERT_NE(w.server, nullptr);
  auto runner = run(w.apply("runner", runner_yaml(w.ns, "ci-down1")));
  ASSERT_TRUE(runner.ok) << runner.output;

  w.server.reset();  // the webhook is down; its configurations stay

  auto set = run(w.apply("set", runnerset_yaml(w.ns, "ci")));
  EXPECT_FALSE(set.ok);
  EXPECT_NE(set.output.find("failed calling webhook"), std::string::npos) << set.output;
  auto another = run(w.apply("runner2", runner_yaml(w.ns, "ci-down2")));
  EXPECT_FALSE(another.ok) << "a Runner created while no webhook answers";
  EXPECT_NE(another.output.find("failed calling webhook"), std::string::npos) << another.output;
  const std::string target = "runner/ci-down1 -n " + w.ns;
  auto label = run("label " + target + " during=outage");
  EXPECT_TRUE(label.ok) << label.output;
  auto spec_change = run("patch " + target + R"( --type=merge -p '{"spec":{"runnerGroup":"gpu"}}')");
  EXPECT_FALSE(spec_change.ok);
  EXPECT_NE(spec_change.output.find("spec is immutable"), std::string::npos) << spec_change.output;
  w.stop();
}

// deploy/webhook-configurations.yaml says what the manager generates for
// the in-cluster Service: same webhooks, paths, rules and failure policies.
TEST(DeployManifests, MatchTheWebhookConfigurationsTheManagerGenerates) {
  auto listed = run(std::string("create --dry-run=client -o json -f ") + OCTORUN_DEPLOY_DIR +
                    "/webhook-configurations.yaml");
  ASSERT_TRUE(listed.ok) << listed.output;
  // kubectl prints one JSON object per manifest, one after the other.
  std::vector<rapidjson::Document> items;
  rapidjson::StringStream stream(listed.output.c_str());
  for (;;) {
    rapidjson::Document d;
    d.ParseStream<rapidjson::kParseStopWhenDoneFlag>(stream);
    if (d.HasParseError()) break;
    items.push_back(std::move(d));
  }
  ASSERT_EQ(items.size(), 2u) << listed.output;
  webhook_configuration_options o;
  o.target = {"octorun-system", "octorun-webhook", 443, ""};
  for (const auto& item : items) {
    const std::string kind = item["kind"].GetString();
    rapidjson::Document generated;
    generated.Parse((kind == "MutatingWebhookConfiguration" ? mutating_webhook_configuration(o)
                                                            : validating_webhook_configuration(o))
                        .c_str());
    EXPECT_STREQ(item["metadata"]["name"].GetString(), generated["metadata"]["name"].GetString());
    const auto& want = generated["webhooks"];
    const auto& have = item["webhooks"];
    ASSERT_EQ(have.Size(), want.Size()) << kind;
    for (rapidjson::SizeType i = 0; i < want.Size(); ++i) {
      for (const char* key : {"name", "failurePolicy", "sideEffects", "matchPolicy"})
        EXPECT_EQ(std::string(have[i][key].GetString()), want[i][key].GetString()) << kind << " " << key;
      EXPECT_TRUE(have[i]["clientConfig"]["service"] == want[i]["clientConfig"]["service"]) << kind;
      EXPECT_TRUE(have[i]["rules"] == want[i]["rules"]) << kind;
    }
  }
}

}  // namespace
}  // namespace octorun::admission
