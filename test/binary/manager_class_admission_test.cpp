// Hostile tenants against RunnerClasses (hostile_tenant_fixture.hpp): what
// admission and the manager let a set run. A hand-made Runner gets nothing
// from its set. A class's cap per namespace: the admission webhook
// (in-process, judging against the classes and the namespace's RunnerSets
// as read from the apiserver, as the manager's does) refuses a second set
// that would pass it, and a cap tightened under two running sets stops the
// younger (docs/runner-classes.md, docs/security.md). A tenant's own
// credentials and containerMode kubernetes runners never share a namespace.
#include <gtest/gtest.h>

#include "test/binary/hostile_tenant_fixture.hpp"

namespace octorun {
namespace {

using test::HostileTenant;
using namespace std::chrono_literals;

// A Runner a tenant makes by hand with a set's label and a template of its
// choosing, past admission (no webhook here): the set never registers it on
// GitHub (no JIT configuration, no pod), says why in one Warning Event on
// it, and keeps serving its own. At 1a1baa0 such a Runner registered on
// GitHub with labels the set never declared.
TEST_F(HostileTenant, AHandMadeRunnerGetsNoJitConfigurationFromTheSet) {
  start();
  const auto scope = github_->ghes_url() + "/acme";
  create_set("linux", scope);
  ASSERT_TRUE(wait_class("linux", "True|Admitted").starts_with("True|Admitted|")) << manager_->log_tail();
  ASSERT_TRUE(test::poll([&] { return runners_of("linux"); }, [](std::size_t n) { return n == 1; }, 60s))
      << manager_->log_tail();
  test::kubectl(
      c_, "-n " + tenant_ + " create -f - >/dev/null <<'EOF'\n" +
              R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":"linux-hand1",)"
              R"("labels":{"octorun.io/runnerset":"linux"}},"spec":{"runnerSetName":"linux","scopeURL":")" +
              scope +
              R"(","runnerLabels":["linux","gpu","prod-deploy"],"template":)"
              R"({"spec":{"containers":[{"name":"runner","image":"r:1"}]}}}})"
              "\nEOF");
  auto warned = test::poll(
      [&] {
        return get(
            "events.events.k8s.io --field-selector regarding.kind=Runner,regarding.name=linux-hand1 -o "
            "jsonpath='{range .items[*]}{.type}|{.reason}{\"\\n\"}{end}'");
      },
      [](const std::string& w) { return w.find("Warning|NotMadeByRunnerSet") != std::string::npos; }, 30s);
  EXPECT_NE(warned.last.find("Warning|NotMadeByRunnerSet"), std::string::npos) << warned.last;
  for (const auto& name : github_->runner_names())
    EXPECT_NE(name, "linux-hand1") << "the hand-made Runner was registered on GitHub";
  EXPECT_EQ(get("secret/linux-hand1-jit pod/linux-hand1 -o name 2>/dev/null || true"), "")
      << "a JIT Secret or pod was made for it";
  EXPECT_EQ(runners_of("linux"), 2u) << "its own runner and the hand-made one, which it does not count";
  EXPECT_TRUE(wait_class("linux", "True|Admitted").starts_with("True|Admitted|"));
}

TEST_F(HostileTenant, AdmissionRefusesASecondSetThatPassesTheNamespaceCapNamingIt) {
  apply_class("\"" + github_->ghes_url() + "\"", R"(,"maxRunnersPerNamespace":3)");
  start_webhook();
  const auto scope = github_->ghes_url() + "/acme";
  ASSERT_EQ(refusal(set_json("first", scope)), "");
  // Alone it keeps to the per-set rules; beside the first it passes the cap.
  const auto refused = refusal(set_json("second", scope));
  EXPECT_NE(refused.find("spec.maxRunners: takes the sets of namespace \"" + tenant_ +
                         "\" under RunnerClass \"" + class_ +
                         "\" to 4 runners (2 of them the other sets'), more than the 3 the class allows "
                         "per namespace (spec.maxRunnersPerNamespace)"),
            std::string::npos)
      << refused;
  EXPECT_NE(get("runnersets -o name").find("first"), std::string::npos);
  EXPECT_EQ(get("runnersets -o name").find("second"), std::string::npos) << "the refused set was stored";
}

// A tenant's template that reaches past its pod (privileged, the node's
// filesystem or network, a node of its choosing), a set that asks for more
// runners than any set may, and a Runner made by hand with a set's label:
// each refused at admission, naming the field (and the class where it is
// the class's rule), and nothing stored. On main at 1a1baa0 each was
// admitted (issue 32).
TEST_F(HostileTenant, AdmissionRefusesPodEscapesUnboundedSetsAndHandMadeRunners) {
  apply_class("\"" + github_->ghes_url() + "\"");  // podSecurity: baseline, the default
  start_webhook();
  const auto scope = github_->ghes_url() + "/acme";
  auto with_pod = [&](const std::string& name, const std::string& pod_spec) {
    auto json = set_json(name, scope);
    const std::string plain = R"("spec":{"containers":[{"name":"runner","image":"r:1"}]})";
    json.replace(json.find(plain), plain.size(), R"("spec":)" + pod_spec);
    return json;
  };
  const std::string of_class = "of RunnerClass \"" + class_ + "\"";
  const struct {
    std::string name, pod, field;
  } escapes[] = {
      {"privileged",
       R"({"containers":[{"name":"runner","image":"r:1","securityContext":{"privileged":true}}]})",
       "spec.template.spec.containers[0].securityContext.privileged"},
      {"host-path",
       R"({"containers":[{"name":"runner","image":"r:1"}],"volumes":[{"name":"root","hostPath":{"path":"/"}}]})",
       "spec.template.spec.volumes[0].hostPath"},
      {"host-network", R"({"hostNetwork":true,"containers":[{"name":"runner","image":"r:1"}]})",
       "spec.template.spec.hostNetwork"},
      {"node-name", R"({"nodeName":"control-plane","containers":[{"name":"runner","image":"r:1"}]})",
       "spec.template.spec.nodeName"},
  };
  for (const auto& e : escapes) {
    const auto refused = refusal(with_pod(e.name, e.pod));
    EXPECT_NE(refused.find(e.field), std::string::npos) << e.name << ": " << refused;
    EXPECT_NE(refused.find(of_class), std::string::npos) << e.name << ": " << refused;
  }
  auto unbounded = set_json("unbounded", scope);
  const std::string counts = R"("minRunners":1,"maxRunners":2)";
  unbounded.replace(unbounded.find(counts), counts.size(), R"("minRunners":100000,"maxRunners":100000)");
  const auto too_many = refusal(unbounded);
  EXPECT_NE(too_many.find("spec.minRunners"), std::string::npos) << too_many;
  EXPECT_NE(too_many.find("spec.maxRunners"), std::string::npos) << too_many;
  EXPECT_EQ(get("runnersets -o name"), "") << "a refused set was stored";

  // A Runner by hand, as a tenant RBAC lets past (system:masters): only
  // the manager's user creates Runners.
  ASSERT_EQ(refusal(set_json("linux", scope)), "");
  const auto hand_made =
      R"({"apiVersion":"octorun.io/v1alpha1","kind":"Runner","metadata":{"name":"linux-hand1",)"
      R"("labels":{"octorun.io/runnerset":"linux"}},"spec":{"runnerSetName":"linux","scopeURL":")" +
      scope +
      R"(","template":)"
      R"({"spec":{"containers":[{"name":"runner","image":"r:1"}]}}}})";
  std::string made_by_tenant;
  try {
    test::kubectl(c_, "-n " + tenant_ + " create --as=tenant --as-group=system:masters -f - 2>&1 <<'EOF'\n" +
                          hand_made + "\nEOF");
  } catch (const std::runtime_error& e) {
    made_by_tenant = e.what();
  }
  EXPECT_NE(made_by_tenant.find("only the Octorun manager"), std::string::npos) << made_by_tenant;
  EXPECT_EQ(get("runners -o name"), "") << "the hand-made Runner was stored";
}

TEST_F(HostileTenant, ATightenedNamespaceCapStopsTheYoungerSetAndKeepsTheOlder) {
  start();
  const auto server = "\"" + github_->ghes_url() + "\"";
  apply_class(server, R"(,"maxRunnersPerNamespace":4)");
  // Made in this order; within one second of each other their names order
  // them the same way (creationTimestamp, then name).
  create_set("older", github_->ghes_url() + "/acme");
  create_set("younger", github_->ghes_url() + "/acme");
  for (const auto* set : {"older", "younger"}) {
    ASSERT_TRUE(wait_class(set, "True|Admitted").starts_with("True|Admitted|")) << manager_->log_tail();
    ASSERT_TRUE(test::poll([&] { return runners_of(set); }, [](std::size_t n) { return n == 1; }, 60s))
        << set << "\n"
        << manager_->log_tail();
  }
  apply_class(server, R"(,"maxRunnersPerNamespace":2)");  // the platform tightens the class under both
  auto got = wait_class("younger", "False|OverLimits");
  ASSERT_TRUE(got.starts_with("False|OverLimits|")) << got << "\n" << manager_->log_tail();
  EXPECT_NE(got.find("spec.maxRunners: takes the sets of namespace \"" + tenant_ + "\" under RunnerClass \"" +
                     class_ +
                     "\" to 4 runners with the sets older than it, more than the 2 the class allows "
                     "per namespace (spec.maxRunnersPerNamespace)"),
            std::string::npos)
      << got;
  auto warned =
      test::poll([&] { return warnings("younger"); },
                 [](const std::string& w) { return w.find("ClassOverLimits|") != std::string::npos; }, 30s);
  EXPECT_NE(warned.last.find("spec.maxRunnersPerNamespace"), std::string::npos) << warned.last;
  // Its idle runner goes (none runs a job), and none starts in its place.
  EXPECT_TRUE(test::poll([&] { return runners_of("younger"); }, [](std::size_t n) { return n == 0; }, 60s))
      << manager_->log_tail();
  EXPECT_TRUE(wait_class("older", "True|Admitted").starts_with("True|Admitted|"));
  EXPECT_EQ(runners_of("older"), 1u) << "the older set keeps to the cap and keeps its runner";
}

// A kubernetes-mode runner's token may list every Secret of its namespace
// (the runner container hooks need it), so a set's own credentials never
// share a namespace with one: admission refuses the set that would bring
// them together, naming the field and the other set, and a pair written
// past admission (the webhook failing open) is judged at use: the
// kubernetes-mode set, though the older, starts no runner and its idle one
// goes, while the credentials' set runs. On main at 1a1baa0 both were served.
TEST_F(HostileTenant, ATenantsCredentialsNeverShareANamespaceWithKubernetesModeRunners) {
  apply_class("\"" + github_->ghes_url() + "\"", "", R"(,"allowTenantCredentials":true)");
  test::kubectl(c_,
                "-n " + tenant_ +
                    " create secret generic tenant-pat --from-literal=github_token=ghp_tenant >/dev/null");
  start_webhook();
  const auto scope = github_->ghes_url() + "/acme";
  const std::string own = R"("credentialsSecretName":"tenant-pat",)";
  const std::string kube = R"("containerMode":{"type":"kubernetes"},)";
  const auto both = refusal(set_json("both", scope, own + kube));
  EXPECT_NE(both.find("spec.credentialsSecretName: must be left out while spec.containerMode.type is "
                      "kubernetes: a kubernetes-mode runner's token may list and read every Secret of its "
                      "namespace"),
            std::string::npos)
      << both;
  ASSERT_EQ(refusal(set_json("creds", scope, own)), "");
  const auto refused = refusal(set_json("kube", scope, kube));
  EXPECT_NE(refused.find("spec.containerMode.type: must not be kubernetes in namespace \"" + tenant_ +
                         "\": RunnerSet \"creds\" keeps its credentials there (Secret \"tenant-pat\")"),
            std::string::npos)
      << refused;
  EXPECT_EQ(get("runnersets -o name"), "runnerset.octorun.io/creds\n") << "a refused set was stored";

  // Past admission, the kubernetes-mode set first: it runs (the hooks'
  // rights bound from the cluster's view role) until a set's credentials
  // come beside it.
  test::kubectl(c_, "delete " + configurations_ + " >/dev/null");
  configurations_.clear();
  test::kubectl(c_, "-n " + tenant_ + " delete runnerset creds >/dev/null");
  start(R"(,"allowTenantCredentials":true)", {"--runner-kubernetes-mode-cluster-role=view"});
  create_set("kube", scope, kube);
  ASSERT_TRUE(wait_class("kube", "True|Admitted").starts_with("True|Admitted|")) << manager_->log_tail();
  ASSERT_TRUE(test::poll([&] { return runners_of("kube"); }, [](std::size_t n) { return n == 1; }, 60s))
      << manager_->log_tail();
  create_set("creds", scope, own);
  auto got = wait_class("kube", "False|OverLimits");
  ASSERT_TRUE(got.starts_with("False|OverLimits|")) << got << "\n" << manager_->log_tail();
  EXPECT_NE(got.find("spec.containerMode.type: must not be kubernetes in namespace \"" + tenant_ +
                     "\": RunnerSet \"creds\" keeps its credentials there"),
            std::string::npos)
      << got;
  EXPECT_TRUE(test::poll([&] { return runners_of("kube"); }, [](std::size_t n) { return n == 0; }, 60s))
      << "the kubernetes-mode runner stayed beside the tenant's credentials\n"
      << manager_->log_tail();
  ASSERT_TRUE(wait_class("creds", "True|Admitted").starts_with("True|Admitted|")) << manager_->log_tail();
  EXPECT_TRUE(test::poll([&] { return runners_of("creds"); }, [](std::size_t n) { return n == 1; }, 60s))
      << manager_->log_tail();
}

}  // namespace
}  // namespace octorun
