// The chart against the test control plane: `helm install` creates every
// object (RBAC that grants the manager its calls in the watched namespace
// only, admission webhooks scoped to it), `helm upgrade` with a changed value
// rolls the Deployment, an upgrade with a bad value is refused and changes
// nothing, and `helm uninstall` leaves nothing of the release behind but the
// CRDs (which Helm never deletes). The manager's pods are pinned to a node
// that does not exist (and the test cluster runs no Deployment controller):
// no pod needs to run on kwok's fake node (the chart on
// a real node is the `deploy` tests').
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "test/chart/helm.hpp"
#include "test/support/test_cluster.hpp"
#include "test/support/wait.hpp"

namespace octorun::test {
namespace {

using namespace std::chrono_literals;

class ChartInstall : public ::testing::Test {
 protected:
  void SetUp() override {
    install_crds(cluster());
    ns_ = make_namespace(cluster(), "chart");
    watched_ = make_namespace(cluster(), "chart-runners");
    release_ = "chart-" + std::to_string(getpid());
    fullname_ = release_ + "-octorun";
    sa_ = "system:serviceaccount:" + ns_ + ":" + fullname_ + "-manager";
  }
  void TearDown() override {
    helm("uninstall " + release_ + " -n " + ns_ + kube() + " --ignore-not-found");
    kubectl(cluster(),
            "delete namespace " + ns_ + " " + watched_ + " --wait=false --ignore-not-found >/dev/null");
  }

  std::string kube() const { return " --kubeconfig " + shell_quote(cluster().kubeconfig); }

  // The values of the release; `extra` adds to or overrides them.
  std::string values(const std::string& extra) const {
    return " --set watchNamespaces={" + watched_ +
           "} --set rbac.namespaced=true"
           " --set nodeSelector.octorun-chart-test=no-such-node"
           // Its pods never run here, so neither could the uninstall hook's
           // (the deploy test runs it on the real node).
           " --set uninstallHook.enabled=false"
           // A default RunnerClass is cluster-wide: it would become the class
           // of every other test's RunnerSets while this release exists.
           " --set runnerClasses.default.create=false"
           " --set githubWebhook.enabled=true " +
           extra;
  }

  command_result helm_release(const std::string& verb, const std::string& extra) {
    return helm(verb + " " + release_ + " " + shell_quote(chart_dir()) + " -n " + ns_ + kube() +
                " --timeout 2m" + values(extra));
  }

  std::string get(const std::string& what, const std::string& jsonpath, const std::string& ns) {
    return kubectl(cluster(),
                   "get " + what + (ns.empty() ? "" : " -n " + ns) + " -o jsonpath=" + shell_quote(jsonpath));
  }

  bool can(const std::string& call, const std::string& ns) {
    auto out = run_shell(shell_quote(cluster().bin + "/kubectl") +
                         " --kubeconfig=" + shell_quote(cluster().kubeconfig) + " auth can-i " + call +
                         " -n " + ns + " --as=" + sa_ + " 2>/dev/null");
    return out.output.rfind("yes", 0) == 0;
  }

  // Objects of the release still in the cluster (kind/name lines).
  std::string leftovers() {
    const std::string selector = " -l app.kubernetes.io/instance=" + release_ + " -o name";
    return kubectl(cluster(),
                   "get deployments,replicasets,pods,serviceaccounts,services,secrets,roles,rolebindings,"
                   "poddisruptionbudgets,ingresses,networkpolicies -A" +
                       selector) +
           kubectl(cluster(),
                   "get clusterroles,clusterrolebindings,mutatingwebhookconfigurations,"
                   "validatingwebhookconfigurations" +
                       selector) +
           // Helm's own release records.
           kubectl(cluster(), "get secrets -n " + ns_ + " -l owner=helm,name=" + release_ + " -o name");
  }

  // `kubectl auth can-i --list` as the manager in `ns`: each granted rule as
  // resource -> (resource names, verbs); non-resource URLs left out.
  struct granted {
    std::string names, verbs;
  };
  std::multimap<std::string, granted> can_i_list(const std::string& ns) {
    auto out = run_shell(shell_quote(cluster().bin + "/kubectl") +
                         " --kubeconfig=" + shell_quote(cluster().kubeconfig) + " auth can-i --list -n " +
                         ns + " --as=" + sa_ + " 2>/dev/null");
    EXPECT_EQ(out.status, 0) << out.all();
    std::multimap<std::string, granted> rules;
    static const std::regex row(R"(^(\S+)\s+\[[^\]]*\]\s+\[([^\]]*)\]\s+\[([^\]]*)\]\s*$)");
    std::istringstream in(out.output);
    for (std::string line; std::getline(in, line);)
      if (std::smatch m; std::regex_match(line, m, row)) rules.emplace(m[1], granted{m[2], m[3]});
    EXPECT_FALSE(rules.empty()) << out.all();
    return rules;
  }

  // `kubectl create rolebinding` of `cluster_role` as the manager, a server-side dry run.
  // Labelled and bound as the manager makes a set's binding (to the set's
  // runner ServiceAccount), so that the chart's write policy lets it through
  // and RBAC alone decides.
  command_result bind_as_manager(const std::string& cluster_role) {
    const auto kubectl =
        shell_quote(cluster().bin + "/kubectl") + " --kubeconfig=" + shell_quote(cluster().kubeconfig);
    return run_shell(kubectl + " create rolebinding octorun-probe -n " + watched_ +
                     " --clusterrole=" + cluster_role + " --serviceaccount=" + watched_ +
                     ":octorun-runner-probe --dry-run=client -o yaml | " + kubectl +
                     " label --local -f - octorun.io/runnerset=probe -o yaml | " + kubectl +
                     " create -f - --dry-run=server --as=" + sa_ + " 2>&1");
  }

  std::string ns_, watched_, release_, fullname_, sa_;
};

bool has_word(const std::string& words, const std::string& word) {
  std::istringstream in(words);
  for (std::string w; in >> w;)
    if (w == word) return true;
  return false;
}

TEST_F(ChartInstall, InstallsUpgradesAndUninstallsCleanly) {
  auto installed = helm_release("install", "--set githubWebhook.secret=first");
  ASSERT_EQ(installed.status, 0) << installed.all();

  // The objects, with what the values asked for.
  const auto deployment = "deployment/" + fullname_ + "-manager";
  EXPECT_EQ(get(deployment, "{.spec.replicas}", ns_), "2");
  for (const auto& what :
       {"serviceaccount/" + fullname_ + "-manager", "service/" + fullname_ + "-webhook",
        "service/" + fullname_ + "-manager-metrics", "service/" + fullname_ + "-github-webhook",
        "secret/" + fullname_ + "-github-webhook", "poddisruptionbudget/" + fullname_ + "-manager",
        "networkpolicy/" + fullname_ + "-manager", "role/" + fullname_ + "-manager-namespace"})
    EXPECT_EQ(get(what, "{.metadata.name}", ns_), what.substr(what.find('/') + 1)) << what;
  EXPECT_EQ(get("role/" + fullname_ + "-manager", "{.metadata.name}", watched_), fullname_ + "-manager");
  for (const auto& what :
       {"mutatingwebhookconfiguration/" + fullname_, "validatingwebhookconfiguration/" + fullname_,
        "clusterrole/" + fullname_ + "-webhook-ca-injector"})
    EXPECT_EQ(get(what, "{.metadata.name}", ""), what.substr(what.find('/') + 1)) << what;
  EXPECT_EQ(get("validatingwebhookconfiguration/" + fullname_,
                "{.webhooks[0].namespaceSelector.matchExpressions[0].values[0]}", ""),
            watched_);
  // The manager may do its work in the watched namespace, and nowhere else.
  for (const auto& call : {"list runnersets.octorun.io", "create runners.octorun.io", "create pods",
                           "create secrets", "create events.events.k8s.io"})
    EXPECT_TRUE(can(call, watched_)) << call;
  EXPECT_FALSE(can("list runnersets.octorun.io", ns_));
  EXPECT_FALSE(can("create pods", ns_));
  // It reads namespaces (their labels, for RunnerClasses' namespaceSelector), never writes them.
  EXPECT_TRUE(can("get namespaces/" + ns_, ns_));
  EXPECT_FALSE(can("update namespaces/" + ns_, ns_));
  EXPECT_TRUE(can("update leases.coordination.k8s.io", ns_));
  // The admission webhooks apply in the watched namespace only: there they are
  // called (and fail, no manager runs), elsewhere RunnerSets pass untouched.
  // The apiserver learns of new configurations through its informer: observe it.
  auto dry_run = [&](const std::string& ns) {
    return run_shell(
        shell_quote(cluster().bin + "/kubectl") + " --kubeconfig=" + shell_quote(cluster().kubeconfig) +
        " create --dry-run=server -f - <<'EOF'\napiVersion: octorun.io/v1alpha1\nkind: RunnerSet\n"
        "metadata: {name: ci, namespace: " +
        ns +
        "}\nspec:\n  scopeURL: https://github.com/acme\n"
        "  credentialsSecretName: github\n  template: {spec: {containers: [{name: runner, image: r}]}}\n"
        "EOF\n");
  };
  command_result watched_call;
  for (auto deadline = std::chrono::steady_clock::now() + 60s; std::chrono::steady_clock::now() < deadline;) {
    watched_call = dry_run(watched_);
    if (watched_call.all().find("failed calling webhook") != std::string::npos) break;
  }
  EXPECT_NE(watched_call.status, 0) << watched_call.all();
  EXPECT_NE(watched_call.all().find(fullname_ + "-webhook"), std::string::npos) << watched_call.all();
  auto elsewhere = dry_run(ns_);
  EXPECT_EQ(elsewhere.status, 0) << elsewhere.all();

  const auto args = "{.spec.template.spec.containers[0].args}";
  const auto checksum = "{.spec.template.metadata.annotations.checksum/github-webhook-secret}";
  EXPECT_NE(get(deployment, args, ns_).find("--log-level=info"), std::string::npos);
  const auto first_checksum = get(deployment, checksum, ns_);
  EXPECT_EQ(first_checksum.size(), 64u);
  EXPECT_EQ(get(deployment, "{.metadata.generation}", ns_), "1");

  // Upgrade with changed values: the pod template changes, so the pods roll.
  auto upgraded = helm_release("upgrade", "--set githubWebhook.secret=second --set logLevel=debug");
  ASSERT_EQ(upgraded.status, 0) << upgraded.all();
  EXPECT_NE(get(deployment, args, ns_).find("--log-level=debug"), std::string::npos);
  EXPECT_NE(get(deployment, checksum, ns_), first_checksum);
  EXPECT_EQ(get("secret/" + fullname_ + "-github-webhook", "{.data.secret}", ns_), "c2Vjb25k");  // "second"
  // A new pod template: the Deployment controller rolls the pods (the
  // generation says the spec changed).
  EXPECT_EQ(get(deployment, "{.metadata.generation}", ns_), "2");

  // A bad value is refused before anything changes.
  auto refused = helm_release("upgrade", "--set githubWebhook.secret=second --set replicas=0");
  EXPECT_NE(refused.status, 0) << refused.all();
  EXPECT_NE(refused.all().find("replicas: 0"), std::string::npos) << refused.all();
  EXPECT_EQ(get(deployment, "{.spec.replicas}", ns_), "2");
  EXPECT_EQ(get(deployment, "{.metadata.generation}", ns_), "2");
  auto history = helm("history " + release_ + " -n " + ns_ + kube() + " -o json");
  EXPECT_EQ(history.output.find("\"revision\":3"), std::string::npos) << history.all();

  auto uninstalled = helm("uninstall " + release_ + " -n " + ns_ + kube() + " --wait --timeout 2m");
  ASSERT_EQ(uninstalled.status, 0) << uninstalled.all();
  // Helm's --wait covers the objects Helm deleted; the Deployment's
  // ReplicaSets and pods are the garbage collector's to delete after it,
  // asynchronously (ownerReferences), so they may outlive the uninstall.
  wait_for_value([&] { return leftovers(); }, std::string(), 60s, "the release's objects to be gone");
  // Helm leaves CRDs alone: RunnerSets elsewhere survive an uninstall.
  EXPECT_EQ(get("crd/runnersets.octorun.io", "{.metadata.name}", ""), "runnersets.octorun.io");
}

// The manager's rights as the API server grants them, measured with
// `kubectl auth can-i --list` as its ServiceAccount, with the chart's
// cluster-wide defaults plus rbac.containerModeKubernetes (the most it
// ever holds). On main at 77393a5 (issue 32) each of these was allowed:
// list and watch of every Secret, pods/exec and batch jobs everywhere,
// creating Roles, and so binding any role made of rights it held; at
// fcacfb4, get on every Secret and ConfigMap.
TEST_F(ChartInstall, TheManagerCannotListSecretsExecWriteRolesOrBindOtherRoles) {
  auto installed = helm_release(
      "install",
      "--set githubWebhook.secret=s --set rbac.namespaced=false --set rbac.containerModeKubernetes=true");
  ASSERT_EQ(installed.status, 0) << installed.all();
  const auto runner_role = fullname_ + "-runner-kubernetes-mode";
  const auto reads_role = fullname_ + "-manager-reads";
  for (const auto& ns : {watched_, ns_, std::string("kube-system")}) {
    for (const auto& [resource, g] : can_i_list(ns)) {
      const bool any = has_word(g.verbs, "*");
      if (resource == "secrets" || resource == "*" || resource == "*.*") {
        for (const char* verb : {"list", "watch"})
          EXPECT_FALSE(any || has_word(g.verbs, verb)) << ns << ": " << verb << " " << resource;
      }
      // Reads come from a set's binding in its namespace; in its own, the
      // release's Secrets by name.
      if (ns != ns_ && (resource == "secrets" || resource == "configmaps")) {
        EXPECT_FALSE(any || has_word(g.verbs, "get")) << ns << ": get " << resource;
      }
      for (const char* never : {"pods/exec", "pods/attach", "jobs.batch", "roles.rbac.authorization.k8s.io"})
        EXPECT_NE(resource, never) << ns << ": [" << g.verbs << "]";
      if (resource == "clusterroles.rbac.authorization.k8s.io") {
        EXPECT_TRUE(g.names == runner_role || g.names == reads_role ||
                    g.names == runner_role + " " + reads_role || g.names == reads_role + " " + runner_role)
            << ns << ": [" << g.verbs << "] on ClusterRoles [" << g.names << "]";
        EXPECT_EQ(g.verbs, "bind") << ns;
      }
      EXPECT_FALSE(has_word(g.verbs, "escalate") || has_word(g.verbs, "impersonate"))
          << ns << " " << resource;
    }
  }
  for (const auto& call :
       {"list secrets", "watch secrets", "get secrets", "get configmaps", "create pods --subresource=exec",
        "create roles.rbac.authorization.k8s.io", "create jobs.batch"})
    EXPECT_FALSE(can(call, watched_)) << call;
  EXPECT_TRUE(can("create rolebindings.rbac.authorization.k8s.io", watched_));

  // It may bind the runner ClusterRole (RoleBindings for kubernetes-mode
  // sets), and no other: not one made of rights it lacks, not cluster-admin.
  const auto reader = "octorun-probe-" + release_;
  kubectl(cluster(), "create clusterrole " + reader + " --verb=get,list --resource=secrets >/dev/null");
  auto runner_binding = bind_as_manager(runner_role);
  EXPECT_EQ(runner_binding.status, 0) << runner_binding.all();
  for (const auto& other : {reader, std::string("cluster-admin")}) {
    auto refused = bind_as_manager(other);
    EXPECT_NE(refused.status, 0) << other << ": " << refused.all();
    EXPECT_NE(refused.all().find("forbidden"), std::string::npos) << other << ": " << refused.all();
  }
  kubectl(cluster(), "delete clusterrole " + reader + " --ignore-not-found >/dev/null");
}

// The NetworkPolicy with every value narrowed, as the API server takes it (a
// server-side dry run validates it against the real schema).
TEST_F(ChartInstall, TheNetworkPolicyWithEveryValueIsValid) {
  auto rendered = helm("template " + release_ + " " + shell_quote(chart_dir()) + " -n " + ns_ +
                       values("--set githubWebhook.secret=s"
                              " --set networkPolicy.metrics.podSelector.matchLabels.app=prometheus"
                              " --set networkPolicy.admission.ipBlocks={10.0.0.10/32}"
                              " --set networkPolicy.githubWebhook.podSelector.matchLabels.app=ingress"
                              " --set networkPolicy.githubWebhook.ipBlocks={192.30.252.0/22}"
                              " --set-json 'networkPolicy.egress=[{\"to\":[{\"ipBlock\":{\"cidr\":"
                              "\"0.0.0.0/0\"}}]}]'"
                              " --show-only templates/manager-networkpolicy.yaml"));
  ASSERT_EQ(rendered.status, 0) << rendered.all();
  char path[] = "/tmp/octorun-netpol-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, rendered.output.data(), rendered.output.size()),
            static_cast<ssize_t>(rendered.output.size()));
  close(fd);
  auto applied = run_shell(shell_quote(cluster().bin + "/kubectl") + " --kubeconfig=" +
                           shell_quote(cluster().kubeconfig) + " apply --dry-run=server -o name -f " + path);
  unlink(path);
  EXPECT_EQ(applied.status, 0) << applied.all();
  EXPECT_EQ(applied.output, "networkpolicy.networking.k8s.io/" + fullname_ + "-manager\n") << applied.all();
}

}  // namespace
}  // namespace octorun::test
