// The manager's write policy as rendered (templates/manager-write-policy.yaml):
// a ValidatingAdmissionPolicy that refuses the manager's writes outside its
// namespace and the tenant namespaces, the default RunnerClass admitting the
// same namespaces, and the label selector turned into the same rule in CEL
// (docs/runner-classes.md, "Admitting a namespace").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/chart/helm.hpp"
#include "test/chart/render_support.hpp"

namespace octorun::test {
namespace {

const char* policy_name = "octorun-manager-writes";

std::string validation(const rendered& r) {
  auto p = r.find("ValidatingAdmissionPolicy", policy_name);
  EXPECT_TRUE(p);
  return p ? str((*p)["spec"]["validations"][0]["expression"]) : "";
}

std::string class_selector(const rendered& r) {
  auto c = r.find("RunnerClass", "standard");
  EXPECT_TRUE(c);
  return c ? YAML::Dump((*c)["spec"]["namespaceSelector"]) : "";
}

std::vector<std::string> strings(const YAML::Node& list) {
  std::vector<std::string> out;
  for (const auto& n : list) out.push_back(str(n));
  return out;
}

TEST(ChartWritePolicy, ByDefaultTheManagerMayWriteOnlyInItsNamespaceAndLabelledOnes) {
  auto r = ok("");
  auto p = r.find("ValidatingAdmissionPolicy", policy_name);
  ASSERT_TRUE(p);
  const auto& spec = (*p)["spec"];
  EXPECT_EQ(str(spec["failurePolicy"]), "Fail");
  // Its ServiceAccount's every write to a namespaced object...
  EXPECT_EQ(str(spec["matchConditions"][0]["expression"]),
            "request.userInfo.username == 'system:serviceaccount:octorun-system:octorun-manager'");
  const auto& rule = spec["matchConstraints"]["resourceRules"][0];
  EXPECT_EQ(strings(rule["apiGroups"]), std::vector<std::string>{"*"});
  EXPECT_EQ(strings(rule["resources"]), std::vector<std::string>{"*/*"});
  EXPECT_EQ(strings(rule["operations"]), (std::vector<std::string>{"CREATE", "UPDATE", "DELETE", "CONNECT"}));
  EXPECT_EQ(str(rule["scope"]), "Namespaced");
  // ...but Octorun's own objects and Events...
  std::vector<std::string> excluded;
  for (const auto& ex : spec["matchConstraints"]["excludeResourceRules"])
    for (const auto& g : ex["apiGroups"])
      for (const auto& res : ex["resources"]) excluded.push_back(str(g) + ":" + str(res));
  EXPECT_EQ(excluded, (std::vector<std::string>{"octorun.io:*/*", ":events", "events.k8s.io:events"}));
  // ...is refused outside its namespace and those labelled octorun.io/tenant=true.
  EXPECT_EQ(
      validation(r),
      "namespaceObject.metadata.name == 'octorun-system' || (('octorun.io/tenant' in variables.labels && "
      "variables.labels['octorun.io/tenant'] == 'true'))");
  auto b = r.find("ValidatingAdmissionPolicyBinding", policy_name);
  ASSERT_TRUE(b);
  EXPECT_EQ(str((*b)["spec"]["policyName"]), policy_name);
  EXPECT_EQ(strings((*b)["spec"]["validationActions"]), std::vector<std::string>{"Deny"});
  // The default class admits the same namespaces.
  EXPECT_EQ(class_selector(r), "{matchLabels: {octorun.io/tenant: true}}");
  // The manager holds no right on admission policies (it cannot remove this
  // one) nor on Namespaces beyond reading them (it cannot label one).
  auto all = ok("--set rbac.containerModeKubernetes=true");
  for (const auto* kind : {"ClusterRole", "Role"})
    for (const auto& role : all.all(kind)) {
      if (str(role["metadata"]["name"]).rfind("octorun-manager", 0) != 0) continue;
      for (const auto& rl : role["rules"]) {
        for (const auto& res : rl["resources"])
          EXPECT_EQ(str(res).find("admissionpolicies"), std::string::npos) << YAML::Dump(role);
        if (!has(strings(rl["resources"]), "namespaces")) continue;
        for (const auto& verb : rl["verbs"]) {
          EXPECT_TRUE(str(verb) == "get" || str(verb) == "list" || str(verb) == "watch") << YAML::Dump(rl);
        }
      }
    }
}

TEST(ChartWritePolicy, WatchNamespacesAreTheTenantNamespacesByName) {
  auto r = ok("--set watchNamespaces={team-a,team-b}");
  EXPECT_EQ(validation(r),
            "namespaceObject.metadata.name == 'octorun-system' || (('kubernetes.io/metadata.name' in "
            "variables.labels && variables.labels['kubernetes.io/metadata.name'] in ['team-a', 'team-b']))");
  EXPECT_NE(class_selector(r).find("values: [team-a, team-b]"), std::string::npos) << class_selector(r);
  // A class the platform chose is left as it is.
  auto own = ok("--set watchNamespaces={team-a} --set-json 'runnerClasses.default.namespaceSelector={}'");
  EXPECT_EQ(class_selector(own), "{}");
}

TEST(ChartWritePolicy, EveryOperatorOfASelectorBecomesTheSameRuleInCel) {
  auto r = ok(
      "--set tenantNamespaces.selector.matchLabels=null --set-json "
      "'tenantNamespaces.selector.matchExpressions=[{\"key\":\"team\",\"operator\":\"In\",\"values\":[\"a\","
      "\"b\"]},{\"key\":\"tier\",\"operator\":\"NotIn\",\"values\":[\"system\"]},{\"key\":\"owner\","
      "\"operator\":\"Exists\"},{\"key\":\"frozen\",\"operator\":\"DoesNotExist\"}]'",
      "ops");
  auto p = r.find("ValidatingAdmissionPolicy", "ops-octorun-manager-writes");
  ASSERT_TRUE(p);
  EXPECT_EQ(
      str((*p)["spec"]["validations"][0]["expression"]),
      "namespaceObject.metadata.name == 'octorun-system' || (('team' in variables.labels && "
      "variables.labels['team'] in ['a', 'b']) && !('tier' in variables.labels && variables.labels['tier'] "
      "in ['system']) && ('owner' in variables.labels) && !('frozen' in variables.labels))");
  EXPECT_EQ(str((*p)["spec"]["matchConditions"][0]["expression"]),
            "request.userInfo.username == 'system:serviceaccount:octorun-system:ops-octorun-manager'");
  auto sa = ok("--set serviceAccount.name=runner-boss");
  auto named = sa.find("ValidatingAdmissionPolicy", policy_name);
  ASSERT_TRUE(named);
  EXPECT_EQ(str((*named)["spec"]["matchConditions"][0]["expression"]),
            "request.userInfo.username == 'system:serviceaccount:octorun-system:runner-boss'");
}

TEST(ChartWritePolicy, OffOrEveryNamespaceRendersNoPolicy) {
  auto off = ok("--set tenantNamespaces.admissionPolicy=false");
  EXPECT_FALSE(off.find("ValidatingAdmissionPolicy", policy_name));
  EXPECT_FALSE(off.find("ValidatingAdmissionPolicyBinding", policy_name));
  EXPECT_EQ(class_selector(off), "{matchLabels: {octorun.io/tenant: true}}");
  // null: every namespace, as before the value existed.
  auto every = ok("--set tenantNamespaces.selector=null");
  EXPECT_FALSE(every.find("ValidatingAdmissionPolicy", policy_name));
  EXPECT_EQ(class_selector(every), "{}");
  // `helm upgrade --reuse-values` from a chart before it: the defaults.
  auto reused = ok("--set tenantNamespaces=null");
  EXPECT_TRUE(reused.find("ValidatingAdmissionPolicy", policy_name));
}

// Keys and values go into CEL inside quotes: the schema holds them to label
// syntax, so none can close the quote and widen the rule.
TEST(ChartWritePolicy, TheSchemaRefusesASelectorThatIsNotLabelSyntax) {
  for (const auto* bad : {R"(tenantNamespaces.selector.matchLabels={"team":"a' || true || '"})",
                          R"(tenantNamespaces.selector.matchLabels={"a' || true || 'b":"x"})",
                          R"(tenantNamespaces.selector.matchExpressions=[{"key":"team","operator":"Any"}])",
                          R"(tenantNamespaces.selector={"matchLabel":{"team":"a"}})"}) {
    auto r = render("--set-json " + shell_quote(bad));
    EXPECT_NE(r.result.status, 0) << bad << "\n" << r.result.all();
    // (Helm names the wrong path for a property name; the schema refuses it.)
    EXPECT_NE(r.result.all().find("values don't meet the specifications of the schema"), std::string::npos)
        << r.result.all();
  }
}

}  // namespace
}  // namespace octorun::test
