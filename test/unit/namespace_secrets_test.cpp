// model/namespace_secrets: a set's own credentials never share a namespace
// with containerMode kubernetes runners, as admission judges a write and as
// the manager judges the sets at use.
#include "model/namespace_secrets.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "model/namespace_cap.hpp"
#include "model/parse.hpp"

namespace octorun::model {
namespace {

// A set of class "team": `credentials` names its own Secret ("": the
// class's), `mode` its containerMode ("": none given), `variants` JSON.
runnerset_spec spec_of(const std::string& credentials, const std::string& mode,
                       const std::string& variants = "") {
  std::string spec = R"({"runnerClassName":"team","scopeURL":"https://github.com/org")";
  if (!credentials.empty()) spec += R"(,"credentialsSecretName":")" + credentials + "\"";
  if (!mode.empty()) spec += R"(,"containerMode":{"type":")" + mode + "\"}";
  if (!variants.empty()) spec += R"(,"variants":)" + variants;
  auto set = parse_runnerset(R"({"metadata":{"name":"x","namespace":"team-a"},"spec":)" + spec + "}}");
  EXPECT_TRUE(set) << (set ? "" : set.error().front().field + ": " + set.error().front().message);
  return set ? set->spec : runnerset_spec{};
}

namespace_set listed(const std::string& name, int created, const runnerset_spec& spec) {
  object_meta m;
  m.name = name;
  m.creation_timestamp = "2026-12-05T10:00:0" + std::to_string(created) + "Z";
  return namespace_set_of(m, spec);
}

platform_classes platform_of(std::vector<namespace_set> sets) {
  platform_classes p;
  auto c = parse_runner_class(R"({"metadata":{"name":"team"},"spec":{"namespaceSelector":{},
    "github":{"credentialsSecretName":"app","allowTenantCredentials":true}}})");
  EXPECT_TRUE(c);
  if (c) p.classes["team"] = *c;
  p.namespace_labels["team-a"] = {{"kubernetes.io/metadata.name", "team-a"}};
  p.namespace_labels["team-b"] = {{"kubernetes.io/metadata.name", "team-b"}};
  p.namespace_sets["team-a"] = std::move(sets);
  return p;
}

TEST(NamespaceSecrets, TheKubernetesModeFieldIsTheOneThatAsksForIt) {
  EXPECT_EQ(kubernetes_mode_field(spec_of("", "")), "");
  EXPECT_EQ(kubernetes_mode_field(spec_of("", "dind")), "");
  EXPECT_EQ(kubernetes_mode_field(spec_of("", "kubernetes")), "spec.containerMode.type");
  EXPECT_EQ(kubernetes_mode_field(
                spec_of("", "", R"([{"name":"a"},{"name":"b","containerMode":{"type":"kubernetes"}}])")),
            "spec.variants[1].containerMode.type");
  EXPECT_EQ(kubernetes_mode_field(spec_of("", "kubernetes", R"([{"name":"a"}])")), "spec.containerMode.type")
      << "a variant without a mode of its own runs the set's";
  EXPECT_EQ(
      kubernetes_mode_field(spec_of("", "kubernetes", R"([{"name":"a","containerMode":{"type":"dind"}}])")),
      "")
      << "no variant runs the set's mode";
}

TEST(NamespaceSecrets, ASetMayNotRunKubernetesModeBesideItsOwnCredentials) {
  auto p = platform_of({listed("both", 1, spec_of("pat", "kubernetes"))});
  auto shared = shares_secrets_with_kubernetes_mode("team-a", "both", p);
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->field, "spec.credentialsSecretName");
  EXPECT_EQ(shared->message,
            "must be left out while spec.containerMode.type is kubernetes: a kubernetes-mode runner's token "
            "may list and read every Secret of its namespace (the runner container hooks need it), so the "
            "jobs it runs could read the credentials in Secret \"pat\"; use the RunnerClass's credentials, "
            "or containerMode none");
  EXPECT_EQ(breaks_namespace_secrets("team-a", "new", spec_of("pat", "kubernetes"), p), shared);
  // The class's credentials (in the platform's namespace), or another mode: nothing to judge.
  EXPECT_FALSE(breaks_namespace_secrets("team-a", "new", spec_of("", "kubernetes"), platform_of({})));
  EXPECT_FALSE(breaks_namespace_secrets("team-a", "new", spec_of("pat", "dind"), platform_of({})));
}

TEST(NamespaceSecrets, AdmissionRefusesTheSetThatWouldBringThemTogether) {
  auto with_credentials = platform_of({listed("creds", 1, spec_of("pat", ""))});
  auto kube = breaks_namespace_secrets("team-a", "new", spec_of("", "kubernetes"), with_credentials);
  ASSERT_TRUE(kube);
  EXPECT_EQ(kube->field, "spec.containerMode.type");
  EXPECT_EQ(kube->message,
            "must not be kubernetes in namespace \"team-a\": RunnerSet \"creds\" keeps its credentials "
            "there (Secret \"pat\"), and a kubernetes-mode runner's token may list and read every Secret of "
            "its namespace (the runner container hooks need it), so the jobs it runs could read the "
            "credentials; run kubernetes-mode sets in a namespace that holds no credentials");

  auto with_kube = platform_of(
      {listed("kube", 1, spec_of("", "", R"([{"name":"k8s","containerMode":{"type":"kubernetes"}}])"))});
  auto creds = breaks_namespace_secrets("team-a", "new", spec_of("pat", ""), with_kube);
  ASSERT_TRUE(creds);
  EXPECT_EQ(creds->field, "spec.credentialsSecretName");
  EXPECT_EQ(creds->message,
            "must be left out in namespace \"team-a\": RunnerSet \"kube\" runs containerMode kubernetes "
            "there, and a kubernetes-mode runner's token may list and read every Secret of its namespace "
            "(the runner container hooks need it), so the jobs it runs could read the credentials; use the "
            "RunnerClass's credentials, or keep kubernetes-mode sets in a namespace of their own");
  // An existing set turned to kubernetes mode, or to its own credentials, is judged alike.
  auto both = platform_of({listed("creds", 1, spec_of("pat", "")), listed("other", 2, spec_of("", ""))});
  EXPECT_TRUE(breaks_namespace_secrets("team-a", "other", spec_of("", "kubernetes"), both));
  EXPECT_TRUE(breaks_namespace_secrets(
      "team-a", "other", spec_of("", "", R"([{"name":"a","containerMode":{"type":"kubernetes"}}])"), both));
  // Beside the class's credentials, or in another namespace, kubernetes mode is fine.
  EXPECT_FALSE(breaks_namespace_secrets("team-a", "new", spec_of("", "kubernetes"),
                                        both = platform_of({listed("other", 2, spec_of("", ""))})));
  EXPECT_FALSE(breaks_namespace_secrets("team-b", "new", spec_of("", "kubernetes"), with_credentials));
}

TEST(NamespaceSecrets, AWriteThatKeepsASetsCredentialsAndModesIsLeftToTheManager) {
  // Two sets admitted side by side (or before the rule): the kubernetes-mode one is over at use.
  auto p =
      platform_of({listed("creds", 1, spec_of("pat", "")), listed("kube", 2, spec_of("", "kubernetes"))});
  EXPECT_FALSE(breaks_namespace_secrets("team-a", "creds", spec_of("pat", ""), p)) << "e.g. a new label";
  EXPECT_FALSE(breaks_namespace_secrets("team-a", "kube", spec_of("", "kubernetes"), p));
  EXPECT_FALSE(breaks_namespace_secrets("team-a", "kube", spec_of("", ""), p)) << "the way out";
  EXPECT_FALSE(breaks_namespace_secrets("team-a", "creds", spec_of("", ""), p)) << "the other way out";
  EXPECT_TRUE(breaks_namespace_secrets("team-a", "creds", spec_of("other-pat", ""), p))
      << "new credentials are judged";
}

TEST(NamespaceSecrets, AtUseTheKubernetesModeSetIsHeldBackWhicheverIsOlder) {
  std::vector<namespace_set> sets{
      listed("early-kube", 0, spec_of("", "kubernetes")), listed("creds", 1, spec_of("pat", "")),
      listed("kube", 2, spec_of("", "kubernetes")), listed("plain", 3, spec_of("", ""))};
  for (int turn = 0; turn < 4; ++turn) {
    std::rotate(sets.begin(), sets.begin() + 1, sets.end());
    auto p = platform_of(sets);
    std::vector<std::string> over;
    for (const auto& name : {"early-kube", "creds", "kube", "plain"})
      if (shares_secrets_with_kubernetes_mode("team-a", name, p)) over.push_back(name);
    EXPECT_EQ(over, (std::vector<std::string>{"early-kube", "kube"}));
  }
  auto p = platform_of(sets);
  auto early = shares_secrets_with_kubernetes_mode("team-a", "early-kube", p);
  ASSERT_TRUE(early);
  EXPECT_EQ(early->field, "spec.containerMode.type");
  EXPECT_NE(early->message.find("RunnerSet \"creds\" keeps its credentials there (Secret \"pat\")"),
            std::string::npos)
      << early->message;
  EXPECT_FALSE(shares_secrets_with_kubernetes_mode("team-a", "unlisted", p));
  EXPECT_FALSE(shares_secrets_with_kubernetes_mode("team-b", "kube", p));
  // Beside the class's credentials alone, a kubernetes-mode set is fine.
  EXPECT_FALSE(shares_secrets_with_kubernetes_mode(
      "team-a", "kube",
      platform_of({listed("kube", 2, spec_of("", "kubernetes")), listed("plain", 3, spec_of("", ""))})));
}

TEST(NamespaceSecrets, TheManagersVerdictHoldsTheKubernetesModeSetBackAndStillSendsItsCalls) {
  // The kubernetes-mode set is the older: the credentials' set still runs.
  auto p =
      platform_of({listed("kube", 1, spec_of("", "kubernetes")), listed("creds", 2, spec_of("pat", ""))});
  auto creds = judge_set_at_use("team-a", "creds", spec_of("pat", ""), &p, {});
  ASSERT_TRUE(creds);
  EXPECT_TRUE(creds->admitted());
  auto kube = judge_set_at_use("team-a", "kube", spec_of("", "kubernetes"), &p, {});
  ASSERT_TRUE(kube);
  EXPECT_TRUE(kube->refused.empty()) << "its calls (draining idle runners) still go out";
  ASSERT_EQ(kube->limits.size(), 1u);
  EXPECT_EQ(kube->limits.front().field, "spec.containerMode.type");
}

}  // namespace
}  // namespace octorun::model
