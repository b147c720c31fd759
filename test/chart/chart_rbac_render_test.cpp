// The chart's RBAC and placement as rendered: namespaced rights per watched
// namespace, the one ClusterRole the manager may bind without holding its
// rights, and the manager kept off nodes running runner pods
// (docs/security.md, "The manager's own rights").
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/naming.hpp"
#include "test/chart/helm.hpp"
#include "test/chart/render_support.hpp"

namespace octorun::test {
namespace {

// Each resource's verbs, over every rule.
std::map<std::string, std::set<std::string>> verbs_by_resource(const YAML::Node& rules) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& rule : rules)
    for (const auto& res : rule["resources"])
      for (const auto& v : rule["verbs"]) out[str(res)].insert(str(v));
  return out;
}

// The same rules as cluster-wide, but the reads: there, the manager binds
// its reads in each namespace of a set (it may bind that ClusterRole);
// here, its Role reads Secrets and ConfigMaps itself.
TEST(ChartRender, NamespacedRbacIsARolePerWatchedNamespaceWithTheClusterRolesRules) {
  auto cluster_wide = ok("");
  auto expected = verbs_by_resource((*cluster_wide.find("ClusterRole", "octorun-manager"))["rules"]);
  EXPECT_EQ(expected.erase("clusterroles"), 1u);
  expected["secrets"].insert("get");
  expected["configmaps"].insert("get");
  auto r = ok("--set rbac.namespaced=true --set watchNamespaces={team-a,team-b}");
  EXPECT_FALSE(r.find("ClusterRole", "octorun-manager"));
  EXPECT_FALSE(r.find("ClusterRoleBinding", "octorun-manager"));
  int roles = 0;
  for (const auto& role : r.all("Role")) {
    if (str(role["metadata"]["name"]) != "octorun-manager") continue;
    ++roles;
    const auto ns = str(role["metadata"]["namespace"]);
    EXPECT_TRUE(ns == "team-a" || ns == "team-b") << ns;
    EXPECT_EQ(verbs_by_resource(role["rules"]), expected);
  }
  EXPECT_EQ(roles, 2);
  int bindings = 0;
  for (const auto& b : r.all("RoleBinding")) {
    if (str(b["metadata"]["name"]) != "octorun-manager") continue;
    ++bindings;
    EXPECT_EQ(str(b["roleRef"]["kind"]), "Role");
    EXPECT_EQ(str(b["subjects"][0]["name"]), "octorun-manager");
    EXPECT_EQ(str(b["subjects"][0]["namespace"]), "octorun-system");
  }
  EXPECT_EQ(bindings, 2);
  // Its own namespace: the Lease and the shared CA Secret (by name for reads).
  auto own = r.find("Role", "octorun-manager-namespace");
  ASSERT_TRUE(own);
  auto dump = YAML::Dump((*own)["rules"]);
  EXPECT_NE(dump.find("leases"), std::string::npos) << dump;
  EXPECT_NE(dump.find("octorun-webhook-ca"), std::string::npos) << dump;
  // The caBundle injection is cluster-scoped, limited to the configurations' names.
  auto injector = r.find("ClusterRole", "octorun-webhook-ca-injector");
  ASSERT_TRUE(injector);
  EXPECT_EQ(str((*injector)["rules"][0]["resourceNames"][0]), "octorun");
}

// containerMode kubernetes: the hooks' rights are a ClusterRole of their
// own, which the manager may bind (and nothing else) but never holds.
TEST(ChartRender, TheManagerMayOnlyBindTheHooksClusterRoleAndHoldsNoneOfItsRights) {
  auto rules = [](const rendered& r) {
    return YAML::Dump((*r.find("ClusterRole", "octorun-manager"))["rules"]);
  };
  auto resources = [](const rendered& r) {
    std::vector<std::string> out;
    for (const auto& rule : (*r.find("ClusterRole", "octorun-manager"))["rules"])
      for (const auto& res : rule["resources"]) out.push_back(str(res));
    return out;
  };
  auto flag = [](const rendered& r) {
    for (const auto& a : args_of(manager_container(deployment(r))))
      if (a.rfind("--runner-kubernetes-mode-cluster-role=", 0) == 0) return a;
    return std::string();
  };
  // The ClusterRoles it may bind (the reads role always, cluster-wide).
  auto bound = [](const rendered& r) {
    std::vector<std::string> names;
    for (const auto& rule : (*r.find("ClusterRole", "octorun-manager"))["rules"]) {
      if (str(rule["verbs"][0]) != "bind") continue;
      EXPECT_EQ(str(rule["resources"][0]), "clusterroles");
      EXPECT_EQ(rule["verbs"].size(), 1u);
      EXPECT_EQ(rule["resourceNames"].size(), 1u) << "bind on every ClusterRole";
      for (const auto& name : rule["resourceNames"]) names.push_back(str(name));
    }
    return names;
  };
  auto off_render = ok("");
  auto off = rules(off_render);
  for (const auto* never : {"pods/exec", "pods/log", "jobs", "roles"})
    EXPECT_FALSE(has(resources(off_render), never)) << never << " in\n" << off;
  EXPECT_EQ(bound(off_render), std::vector<std::string>{"octorun-manager-reads"});
  EXPECT_TRUE(has(resources(off_render), "rolebindings")) << off;
  EXPECT_FALSE(off_render.find("ClusterRole", "octorun-runner-kubernetes-mode"));
  EXPECT_EQ(flag(off_render), "");

  auto on_render = ok("--set rbac.containerModeKubernetes=true");
  auto on = rules(on_render);
  for (const auto* never : {"pods/exec", "pods/log", "jobs", "roles"})
    EXPECT_FALSE(has(resources(on_render), never)) << never << " in\n" << on;
  EXPECT_EQ(on.find("escalate"), std::string::npos) << on;
  EXPECT_EQ(bound(on_render),
            (std::vector<std::string>{"octorun-manager-reads", "octorun-runner-kubernetes-mode"}));
  auto hooks = on_render.find("ClusterRole", "octorun-runner-kubernetes-mode");
  ASSERT_TRUE(hooks);
  auto granted = YAML::Dump((*hooks)["rules"]);
  for (const auto* grant : {"pods/exec", "pods/log", "jobs", "secrets"})
    EXPECT_NE(granted.find(grant), std::string::npos) << granted;
  EXPECT_EQ(flag(on_render), "--runner-kubernetes-mode-cluster-role=octorun-runner-kubernetes-mode");
  auto ns =
      ok("--set rbac.containerModeKubernetes=true --set rbac.namespaced=true --set watchNamespaces={team-a}");
  auto role = ns.find("Role", "octorun-manager");
  ASSERT_TRUE(role);
  int hooks_binds = 0;
  for (const auto& rule : (*role)["rules"])
    if (str(rule["verbs"][0]) == "bind")
      hooks_binds += rule["resourceNames"].size() == 1 &&
                     str(rule["resourceNames"][0]) == "octorun-runner-kubernetes-mode";
  EXPECT_EQ(hooks_binds, 1) << YAML::Dump((*role)["rules"]);
  EXPECT_TRUE(ns.find("ClusterRole", "octorun-runner-kubernetes-mode"));
}

// Cluster-wide, the manager's ClusterRole gets no Secret and no ConfigMap:
// its reads come from the one ClusterRole its sets bind to it in their
// namespaces (--tenant-reads-cluster-role), which the chart binds to no one.
// Per watched namespace (rbac.namespaced) its Role reads them there, and
// there is nothing to bind.
TEST(ChartRender, TheManagerReadsNothingClusterWideButWhereItsSetsBindItsReads) {
  auto r = ok("");
  auto verbs_on = [](const YAML::Node& rules, const std::string& resource) {
    std::vector<std::string> out;
    for (const auto& rule : rules)
      for (const auto& res : rule["resources"])
        if (str(res) == resource)
          for (const auto& v : rule["verbs"]) out.push_back(str(v));
    return out;
  };
  const auto rules = (*r.find("ClusterRole", "octorun-manager"))["rules"];
  EXPECT_EQ(verbs_on(rules, "secrets"), (std::vector<std::string>{"create", "patch"}));
  EXPECT_TRUE(verbs_on(rules, "configmaps").empty());
  auto reads = r.find("ClusterRole", "octorun-manager-reads");
  ASSERT_TRUE(reads);
  EXPECT_EQ(verbs_on((*reads)["rules"], "secrets"), std::vector<std::string>{"get"});
  EXPECT_EQ(verbs_on((*reads)["rules"], "configmaps"), std::vector<std::string>{"get"});
  for (const auto* kind : {"ClusterRoleBinding", "RoleBinding"})
    for (const auto& b : r.all(kind))
      EXPECT_NE(str(b["roleRef"]["name"]), "octorun-manager-reads") << str(b["metadata"]["name"]);
  EXPECT_TRUE(
      has(args_of(manager_container(deployment(r))), "--tenant-reads-cluster-role=octorun-manager-reads"));

  auto ns = ok("--set rbac.namespaced=true --set watchNamespaces={team-a}");
  EXPECT_FALSE(ns.find("ClusterRole", "octorun-manager-reads"));
  auto role = ns.find("Role", "octorun-manager");
  ASSERT_TRUE(role);
  EXPECT_EQ(verbs_on((*role)["rules"], "secrets"), (std::vector<std::string>{"get", "create", "patch"}));
  EXPECT_EQ(verbs_on((*role)["rules"], "configmaps"), std::vector<std::string>{"get"});
  for (const auto& a : args_of(manager_container(deployment(ns))))
    EXPECT_NE(a.rfind("--tenant-reads-cluster-role", 0), 0u) << a;
}

// Warm nodes (docs/scaling.md): the manager writes a PodTemplate and a
// CapacityBuffer per variant with a start-time target, by server-side
// apply, and deletes them; it reads neither back, cluster-wide or per
// watched namespace.
TEST(ChartRender, TheManagerMayKeepWarmNodesAndReadsNoneBack) {
  auto rule_for = [](const YAML::Node& rules, const std::string& group, const std::string& resource) {
    for (const auto& rule : rules)
      for (const auto& res : rule["resources"])
        if (str(res) == resource && str(rule["apiGroups"][0]) == group) {
          std::vector<std::string> verbs;
          for (const auto& v : rule["verbs"]) verbs.push_back(str(v));
          return verbs;
        }
    return std::vector<std::string>{};
  };
  const std::vector<std::string> writes = {"create", "patch", "delete"};
  auto cluster = ok("");
  const auto rules = (*cluster.find("ClusterRole", "octorun-manager"))["rules"];
  EXPECT_EQ(rule_for(rules, "", "podtemplates"), writes);
  EXPECT_EQ(rule_for(rules, "autoscaling.x-k8s.io", "capacitybuffers"), writes);
  auto ns = ok("--set rbac.namespaced=true --set watchNamespaces={team-a}");
  auto role = ns.find("Role", "octorun-manager");
  ASSERT_TRUE(role);
  EXPECT_EQ(rule_for((*role)["rules"], "", "podtemplates"), writes);
  EXPECT_EQ(rule_for((*role)["rules"], "autoscaling.x-k8s.io", "capacitybuffers"), writes);
}

// Runner pods run untrusted jobs (dind: privileged), and node root reads
// every ServiceAccount token on its node: the manager stays off their
// nodes. The term selects the label every runner pod carries
// (model::label_runner, actors/runner/children.cpp) in every namespace.
TEST(ChartRender, TheManagerAvoidsNodesWithRunnerPods) {
  auto runner_term = [](const YAML::Node& term) {
    // yaml-cpp: a missing key is an undefined node, which throws on any question but IsDefined().
    const auto exprs = term["labelSelector"]["matchExpressions"];
    const auto namespaces = term["namespaceSelector"];
    if (!exprs.IsDefined() || !exprs.IsSequence() || exprs.size() != 1 || !namespaces.IsDefined())
      return false;
    return str(exprs[0]["key"]) == model::label_runner && str(exprs[0]["operator"]) == "Exists" &&
           namespaces.IsMap() && namespaces.size() == 0 &&
           str(term["topologyKey"]) == "kubernetes.io/hostname";
  };
  auto anti = [](const rendered& r) { return pod_spec(r)["affinity"]["podAntiAffinity"]; };
  auto preferred_terms = [&](const rendered& r) {
    int n = 0;
    for (const auto& p : anti(r)["preferredDuringSchedulingIgnoredDuringExecution"])
      n += runner_term(p["podAffinityTerm"]) ? 1 : 0;
    return n;
  };
  auto by_default = ok("");
  EXPECT_EQ(preferred_terms(by_default), 1) << YAML::Dump(anti(by_default));
  EXPECT_FALSE(anti(by_default)["requiredDuringSchedulingIgnoredDuringExecution"]);
  auto required = ok("--set runnerNodeAntiAffinity=required");
  EXPECT_EQ(preferred_terms(required), 0);
  ASSERT_EQ(anti(required)["requiredDuringSchedulingIgnoredDuringExecution"].size(), 1u);
  EXPECT_TRUE(runner_term(anti(required)["requiredDuringSchedulingIgnoredDuringExecution"][0]));
  auto none = ok("--set runnerNodeAntiAffinity=none");
  EXPECT_EQ(preferred_terms(none), 0);
  EXPECT_FALSE(anti(none)["requiredDuringSchedulingIgnoredDuringExecution"]);
  EXPECT_EQ(anti(none)["preferredDuringSchedulingIgnoredDuringExecution"].size(), 1u)
      << "replicas still spread";
  EXPECT_NE(render("--set runnerNodeAntiAffinity=always").result.status, 0);
}

}  // namespace
}  // namespace octorun::test
