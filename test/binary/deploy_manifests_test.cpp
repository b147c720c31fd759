// deploy/ against the real apiserver: every manifest passes a server-side
// dry run (schema, defaulting, admission), and the manager's RBAC grants each
// call the code makes and nothing it does not (kubectl auth can-i as the
// ServiceAccount). ManagerBinary.RunsWithOnlyItsOwnRbac runs the binary on it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "test/support/test_cluster.hpp"

#ifndef OCTORUN_DEPLOY_DIR
#error "OCTORUN_DEPLOY_DIR must name deploy/"
#endif

namespace octorun {
namespace {

const std::string deploy_dir = OCTORUN_DEPLOY_DIR;
const std::string manager_sa = "system:serviceaccount:octorun-system:octorun-manager";

std::pair<bool, std::string> run(const std::string& args) {
  try {
    return {true, test::kubectl(test::cluster(), args + " 2>&1")};
  } catch (const std::runtime_error& e) {
    return {false, e.what()};
  }
}

class DeployManifests : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    test::install_crds(test::cluster());
    // The namespace for real (namespaced objects cannot be dry-run into a
    // namespace that does not exist), and the RBAC for the can-i checks.
    auto ns = run("apply -f " + deploy_dir + "/namespace.yaml");
    ASSERT_TRUE(ns.first) << ns.second;
    auto rbac = run("apply -f " + deploy_dir + "/manager-rbac.yaml -f " + deploy_dir + "/webhook-rbac.yaml");
    ASSERT_TRUE(rbac.first) << rbac.second;
  }

  static bool can(const std::string& verb_and_resource, const std::string& ns = "team-a") {
    // "yes" or "no" on stdout (exit code 1 for "no"); warnings on stderr.
    auto out =
        test::kubectl(test::cluster(), "auth can-i " + verb_and_resource + (ns.empty() ? "" : " -n " + ns) +
                                           " --as=" + manager_sa + " 2>/dev/null || true");
    return out.rfind("yes", 0) == 0;
  }
  // The same for a resource the cluster may not serve (kubectl auth can-i
  // resolves its argument by discovery): a SubjectAccessReview, as the
  // apiserver's authorizer answers it.
  static bool can_unserved(const std::string& verb, const std::string& group, const std::string& resource,
                           const std::string& ns = "team-a") {
    const auto review =
        R"({"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":")" +
        std::string(manager_sa) + R"(","resourceAttributes":{"verb":")" + verb + R"(","group":")" + group +
        R"(","resource":")" + resource + R"(","namespace":")" + ns + R"("}}})";
    auto out =
        test::kubectl(test::cluster(), "create -o jsonpath='{.status.allowed}' -f - 2>/dev/null <<'EOF'\n" +
                                           review + "\nEOF\n");
    return out.rfind("true", 0) == 0;
  }
};

TEST_F(DeployManifests, AreAcceptedByTheApiserverInAServerSideDryRun) {
  for (const char* file :
       {"namespace.yaml", "manager-rbac.yaml", "manager-deployment.yaml", "manager-pdb.yaml",
        "manager-metrics-service.yaml", "webhook-rbac.yaml", "webhook-service.yaml",
        "webhook-configurations.yaml", "github-webhook-service.yaml", "prometheus-adapter-rules.yaml",
        "manager-networkpolicy.yaml", "runnerclass-default.yaml", "manager-write-policy.yaml"}) {
    auto out = run("apply --dry-run=server -f " + deploy_dir + "/" + file);
    EXPECT_TRUE(out.first) << file << ": " << out.second;
  }
}

TEST_F(DeployManifests, TheDeploymentRunsTwoReplicasOnItsServiceAccountWithTheWebhookPort) {
  auto out =
      run("apply --dry-run=server -o jsonpath='{.spec.replicas} {.spec.template.spec.serviceAccountName} "
          "{.spec.template.spec.containers[0].ports[?(@.name==\"webhook\")].containerPort} "
          "{.spec.template.spec.containers[0].resources.limits.cpu} "
          "{.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem}' -f " +
          deploy_dir + "/manager-deployment.yaml");
  ASSERT_TRUE(out.first) << out.second;
  EXPECT_EQ(out.second, "2 octorun-manager 9443 2 true");
  auto args = run("create --dry-run=client -o jsonpath='{.spec.template.spec.containers[0].args}' -f " +
                  deploy_dir + "/manager-deployment.yaml");
  ASSERT_TRUE(args.first) << args.second;
  // The worker pool matches the CPU limit of 2.
  EXPECT_NE(args.second.find("--scheduler.max-threads=2"), std::string::npos) << args.second;
}

TEST_F(DeployManifests, TheManagerMayMakeEveryCallItsCodeMakes) {
  const std::vector<std::string> allowed = {
      // The controller's informers and the RunnerSet actors.
      "get runnersets.octorun.io", "list runnersets.octorun.io", "watch runnersets.octorun.io",
      "patch runnersets.octorun.io", "patch runnersets.octorun.io --subresource=status",
      "update runnersets.octorun.io --subresource=finalizers",
      // Runners: created and deleted by their set; status and finalizer patched.
      "get runners.octorun.io", "list runners.octorun.io", "watch runners.octorun.io",
      "create runners.octorun.io", "delete runners.octorun.io", "patch runners.octorun.io",
      "patch runners.octorun.io --subresource=status", "update runners.octorun.io --subresource=finalizers",
      // Runner pods; JIT Secrets created; credentials Secrets' RunnerSet
      // finalizer patched (their reads: the set's binding, below).
      "get pods", "list pods", "watch pods", "create pods", "delete pods", "create secrets", "patch secrets",
      // Events on Runner phase transitions and RunnerSet changes.
      "create events.events.k8s.io", "patch events.events.k8s.io",
      // Each namespace of --namespaces looked up once (one that does not exist is logged).
      "get namespaces",
      // A busy runner's pod labelled; each set's runner ServiceAccount, busy-runner
      // PodDisruptionBudget and containerMode kubernetes RoleBinding (server-side apply).
      "patch pods", "create serviceaccounts", "patch serviceaccounts", "delete serviceaccounts",
      "create poddisruptionbudgets.policy", "patch poddisruptionbudgets.policy",
      "delete poddisruptionbudgets.policy", "create rolebindings.rbac.authorization.k8s.io",
      "patch rolebindings.rbac.authorization.k8s.io", "delete rolebindings.rbac.authorization.k8s.io",
      // Warm nodes: a PodTemplate and a CapacityBuffer per variant with a
      // start-time target (server-side apply).
      "create podtemplates", "patch podtemplates", "delete podtemplates",
      // Its reads in a set's namespace (JIT and credentials Secrets, the CA
      // bundle a set's pods mount): the one ClusterRole each set binds to it there.
      "bind clusterroles.rbac.authorization.k8s.io/octorun-manager-reads",
      // RunnerClasses and the namespaces' labels their selectors match, read only.
      "list runnerclasses.octorun.io", "watch runnerclasses.octorun.io", "list namespaces",
      "watch namespaces"};
  for (const auto& call : allowed) EXPECT_TRUE(can(call)) << call;
  // Warm nodes' CapacityBuffers, whether or not this cluster serves them.
  for (const auto* verb : {"create", "patch", "delete"})
    EXPECT_TRUE(can_unserved(verb, "autoscaling.x-k8s.io", "capacitybuffers")) << verb << " capacitybuffers";
  // Leader election, in its own namespace; the shared webhook CA Secret there.
  for (const auto& call : {"get leases.coordination.k8s.io", "create leases.coordination.k8s.io",
                           "update leases.coordination.k8s.io", "create secrets", "get secrets"})
    EXPECT_TRUE(can(call, "octorun-system")) << call;
  // caBundle injection into its own webhook configurations only.
  for (const auto& kind : {"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}) {
    EXPECT_TRUE(can(std::string("patch ") + kind + ".admissionregistration.k8s.io/octorun", "")) << kind;
    EXPECT_FALSE(can(std::string("patch ") + kind + ".admissionregistration.k8s.io/other", "")) << kind;
  }
}

TEST_F(DeployManifests, TheManagerMayNotDoWhatItsCodeDoesNot) {
  for (const auto& call :
       {"delete runnersets.octorun.io", "create runnersets.octorun.io", "update runners.octorun.io",
        "update pods", "update secrets", "delete secrets", "list configmaps", "create configmaps",
        // Reads come from a set's binding of octorun-manager-reads in its namespace.
        "get secrets", "get configmaps", "get serviceaccounts", "delete roles.rbac.authorization.k8s.io",
        "list podtemplates",
        // What the hooks' ClusterRole grants (rbac.containerModeKubernetes):
        // the manager may only bind it, never holds it.
        "get pods --subresource=log", "create jobs.batch", "create events", "delete events.events.k8s.io",
        "get nodes", "delete namespaces", "update namespaces", "create runnerclasses.octorun.io",
        "patch runnerclasses.octorun.io", "create leases.coordination.k8s.io", "create deployments.apps"})
    EXPECT_FALSE(can(call)) << call;
  EXPECT_FALSE(can_unserved("list", "autoscaling.x-k8s.io", "capacitybuffers"));
  EXPECT_FALSE(can("delete leases.coordination.k8s.io", "octorun-system"));
}

// Issue 32, measured as the API server grants it: cluster-wide
// (--all-namespaces) and in a tenant's namespace, the manager's own and
// kube-system. On main at 77393a5 the manager could list and watch every
// Secret and create and patch Roles in every namespace; the other calls
// were refused then too and stay refused.
TEST_F(DeployManifests, TheManagerCannotListSecretsExecOrWriteRolesAnywhere) {
  for (const std::string call :
       {"list secrets", "watch secrets", "create roles.rbac.authorization.k8s.io",
        "patch roles.rbac.authorization.k8s.io", "create pods --subresource=exec",
        "create clusterroles.rbac.authorization.k8s.io", "bind clusterroles.rbac.authorization.k8s.io",
        "escalate clusterroles.rbac.authorization.k8s.io", "bind roles.rbac.authorization.k8s.io",
        "escalate roles.rbac.authorization.k8s.io", "impersonate serviceaccounts"}) {
    EXPECT_FALSE(can(call + " --all-namespaces", "")) << call << " in every namespace";
    for (const char* ns : {"team-a", "octorun-system", "kube-system"})
      EXPECT_FALSE(can(call, ns)) << call << " in " << ns;
  }
}

}  // namespace
}  // namespace octorun
