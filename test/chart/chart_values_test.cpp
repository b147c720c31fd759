// The chart's values: `helm lint` passes on the defaults and on value sets;
// a value of the wrong type, an unknown key or an impossible combination
// fails `helm template` (and so `helm install`) with a message naming the
// value; every value is documented in the chart's README; deploy/ is the
// chart rendered (deploy/render.sh --check).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test/chart/helm.hpp"

#ifndef OCTORUN_DEPLOY_DIR
#error "OCTORUN_DEPLOY_DIR must name deploy/"
#endif

namespace octorun::test {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ChartLint, PassesStrictlyOnTheDefaultsAndOnValueSets) {
  for (const std::string& flags : std::vector<std::string>{
           "",
           "--set githubWebhook.enabled=true --set githubWebhook.secret=s --set "
           "githubWebhook.ingress.enabled=true",
           "--set githubWebhook.enabled=true --set githubWebhook.existingSecret=gh",
           "--set rbac.namespaced=true --set watchNamespaces={team-a,team-b}",
           "--set admission.certManager.enabled=true --set admission.certManager.selfSigned=true",
           "--set admission.enabled=false --set metrics.serviceMonitor.enabled=true",
           "--set hostNetwork=true --set replicas=1 --set pdb.enabled=false --set "
           "extraCABundle.secretName=ca",
           "-f " + shell_quote(std::string(OCTORUN_DEPLOY_DIR) + "/plain-values.yaml"),
       }) {
    auto r = helm("lint --strict " + shell_quote(chart_dir()) + " " + flags);
    EXPECT_EQ(r.status, 0) << flags << "\n" << r.all();
    EXPECT_NE(r.all().find("0 chart(s) failed"), std::string::npos) << flags << "\n" << r.all();
  }
}

// A bad value set and what the message must contain. values.schema.json's
// violations fail helm lint too; the templates' `fail` only logs under helm
// lint (it renders on with what it has), so there the message must appear.
struct bad_values {
  std::string flags;
  std::vector<std::string> named;
  bool schema = true;
};

bad_values combination(std::string flags, std::vector<std::string> named) {
  return {std::move(flags), std::move(named), false};
}

void PrintTo(const bad_values& v, std::ostream* os) { *os << v.flags; }

class ChartBadValues : public ::testing::TestWithParam<bad_values> {};

TEST_P(ChartBadValues, FailWithAMessageNamingTheValue) {
  const auto& bad = GetParam();
  auto r = render(bad.flags);
  EXPECT_NE(r.result.status, 0) << bad.flags << " rendered:\n" << r.result.all();
  for (const auto& name : bad.named)
    EXPECT_NE(r.result.all().find(name), std::string::npos) << name << " in:\n" << r.result.all();
  auto lint = helm("lint " + shell_quote(chart_dir()) + " " + bad.flags);
  if (bad.schema) {
    EXPECT_NE(lint.status, 0) << bad.flags << "\n" << lint.all();
  }
  for (const auto& name : bad.named)
    EXPECT_NE(lint.all().find(name), std::string::npos) << name << " in:\n" << lint.all();
}

INSTANTIATE_TEST_SUITE_P(
    Values, ChartBadValues,
    ::testing::Values(
        // Types, ranges and lists (values.schema.json).
        bad_values{"--set-string replicas=two", {"/replicas", "want integer"}},
        bad_values{"--set replicas=-1", {"/replicas"}}, bad_values{"--set logLevel=verbose", {"/logLevel"}},
        bad_values{"--set logFormat=xml", {"/logFormat"}},
        bad_values{"--set watchNamespaces=team-a", {"/watchNamespaces", "want array"}},
        bad_values{"--set watchNamespaces={Team_A}", {"/watchNamespaces/0"}},
        bad_values{"--set kubeClient.qps=0", {"/kubeClient/qps"}},
        bad_values{"--set-string kubeClient.burst=lots", {"/kubeClient/burst"}},
        bad_values{"--set kubeClient.connections=0", {"/kubeClient/connections"}},
        bad_values{"--set image.pullPolicy=Sometimes", {"/image/pullPolicy"}},
        bad_values{"--set githubWebhook.port=70000", {"/githubWebhook/port"}},
        bad_values{"--set githubWebhook.sweepSeconds=-1", {"/githubWebhook/sweepSeconds"}},
        bad_values{"--set-string runnerPhaseEvents=no", {"/runnerPhaseEvents", "want boolean"}},
        bad_values{"--set-string hostNetwork=yes", {"/hostNetwork", "want boolean"}},
        bad_values{"--set admission.certManager.issuerRef.kind=Vault",
                   {"/admission/certManager/issuerRef/kind"}},
        bad_values{"--set pdb.minAvailable=half", {"/pdb/minAvailable"}},
        bad_values{"--set extraEnv[0].value=x", {"/extraEnv/0", "name"}},
        // Quantities the API server would refuse, and a memory without a unit (bytes).
        bad_values{"--set-string resources.requests.cpu=lots", {"/resources/requests/cpu"}},
        bad_values{"--set-string resources.limits.memory=512MB", {"/resources/limits/memory"}},
        bad_values{"--set-string resources.limits.memory=256", {"/resources/limits/memory"}},
        bad_values{"--set resources.limits.memory=256", {"/resources/limits/memory"}},
        bad_values{"--set-string resources.limits.ephemeral-storage=1x",
                   {"/resources/limits/ephemeral-storage"}},
        // Unknown keys, at the top level and inside the chart's objects.
        bad_values{"--set replica=3", {"at ''", "additional properties 'replica' not allowed"}},
        bad_values{"--set image.repo=x", {"/image", "repo"}},
        bad_values{"--set githubWebhook.secretName=x", {"/githubWebhook", "secretName"}},
        // Impossible combinations (the templates).
        combination("--set replicas=0", {"replicas: 0", "pdb.enabled"}),
        combination("--set pdb.minAvailable=2", {"pdb.minAvailable=2", "replicas=2"}),
        combination("--set pdb.maxUnavailable=1", {"pdb.minAvailable", "pdb.maxUnavailable"}),
        combination("--set leaderElection.enabled=false", {"leaderElection.enabled=false", "replicas=2"}),
        combination("--set githubWebhook.enabled=true",
                    {"githubWebhook.existingSecret", "githubWebhook.secret"}),
        combination("--set githubWebhook.ingress.enabled=true",
                    {"githubWebhook.ingress.enabled", "githubWebhook.enabled"}),
        combination("--set admission.certManager.enabled=true",
                    {"admission.certManager.issuerRef.name", "admission.certManager.selfSigned"}),
        combination("--set admission.certManager.enabled=true --set admission.certManager.selfSigned=true "
                    "--set admission.certManager.issuerRef.name=ca",
                    {"admission.certManager.selfSigned", "admission.certManager.issuerRef.name"}),
        combination("--set admission.certManager.enabled=true --set admission.certManager.selfSigned=true "
                    "--set admission.enabled=false",
                    {"admission.certManager.enabled", "admission.enabled"}),
        combination("--set rbac.namespaced=true", {"rbac.namespaced", "watchNamespaces"}),
        combination("--set extraCABundle.configMapName=a --set extraCABundle.secretName=b",
                    {"extraCABundle.configMapName", "extraCABundle.secretName"}),
        combination("--set metrics.serviceMonitor.enabled=true --set metrics.service.enabled=false",
                    {"metrics.serviceMonitor.enabled", "metrics.service.enabled"}),
        combination("--set metrics.port=9443", {"metrics.port", "admission.port"}),
        combination("--set probes.port=8081", {"metrics.port", "probes.port"}),
        combination("--set serviceAccount.create=false", {"serviceAccount.name"}),
        bad_values{"--set runnerClasses.default.proxy.url=egress.corp:3128",
                   {"/runnerClasses/default/proxy/url"}},
        combination("--set runnerClasses.default.proxy.credentialsSecretName=egress-login",
                    {"runnerClasses.default.proxy.credentialsSecretName", "runnerClasses.default.proxy.url"}),
        bad_values{"--set monitoring.prometheusAdapterRules.namespaceLabel=ns",
                   {"/monitoring/prometheusAdapterRules/namespaceLabel"}},
        bad_values{"--set-json 'autoscaling.runnerSets=[{\"name\":\"ci\"}]'",
                   {"/autoscaling/runnerSets/0", "maxReplicas"}},
        bad_values{
            "--set-json 'autoscaling.runnerSets=[{\"name\":\"ci\",\"maxReplicas\":3,\"targetBusyRatio\":2}]'",
            {"/autoscaling/runnerSets/0/targetBusyRatio"}},
        combination(
            "--set-json 'autoscaling.runnerSets=[{\"name\":\"ci\",\"minReplicas\":5,\"maxReplicas\":3}]'",
            {"autoscaling.runnerSets[0]", "minReplicas", "maxReplicas"})));

// A PDB with neither bound. (Not under helm lint, which keeps a default that
// --set turns to null.)
TEST(ChartBadValue, APdbWithoutMinAvailableOrMaxUnavailable) {
  auto r = render("--set pdb.minAvailable=null");
  EXPECT_NE(r.result.status, 0) << r.result.all();
  EXPECT_NE(r.result.all().find("pdb.enabled=true needs pdb.minAvailable or pdb.maxUnavailable"),
            std::string::npos)
      << r.result.all();
}

// Every key of values.yaml is in the README's table (as `a.b.c`), or its
// parent is (free-form objects such as resources).
void expect_documented(const YAML::Node& node, const std::string& path, const std::string& readme) {
  if (!path.empty() && readme.find("`" + path + "`") != std::string::npos) return;
  if (node.IsMap() && node.size() > 0) {
    for (const auto& kv : node)
      expect_documented(kv.second,
                        path.empty() ? kv.first.as<std::string>() : path + "." + kv.first.as<std::string>(),
                        readme);
    return;
  }
  ADD_FAILURE() << path << " is not documented in the chart's README.md";
}

TEST(ChartValues, EveryValueIsDocumentedInTheReadmeAndCommentedInValuesYaml) {
  const auto readme = read_file(chart_dir() + "/README.md");
  ASSERT_FALSE(readme.empty());
  const auto values = YAML::LoadFile(chart_dir() + "/values.yaml");
  ASSERT_TRUE(values.IsMap());
  expect_documented(values, "", readme);
  // In values.yaml, each key follows a comment, or opens an object whose keys
  // do; everything inside a commented key's value is covered by its comment.
  std::istringstream lines(read_file(chart_dir() + "/values.yaml"));
  std::string previous, line;
  std::string::size_type documented_indent = std::string::npos;
  for (int n = 1; std::getline(lines, line); ++n, previous = line) {
    const auto indent = line.find_first_not_of(' ');
    if (indent == std::string::npos || line[indent] == '#' || line[indent] == '-' ||
        line.find(':') == std::string::npos)
      continue;
    if (documented_indent != std::string::npos && indent > documented_indent) continue;
    documented_indent = std::string::npos;
    const auto prev_indent = previous.find_first_not_of(' ');
    if (prev_indent != std::string::npos && previous[prev_indent] == '#') {
      documented_indent = indent;
      continue;
    }
    EXPECT_EQ(line.back(), ':') << "values.yaml:" << n << " has no comment: " << line;
  }
}

TEST(ChartValues, TheChartsCrdsAreTheRepositorysCrds) {
  // crds/ is a link: one source for kubectl apply -f crds/, the tests and Helm.
  auto r = helm("show crds " + shell_quote(chart_dir()));
  ASSERT_EQ(r.status, 0) << r.all();
  for (const char* crd : {"runnersets.octorun.io", "runners.octorun.io"})
    EXPECT_NE(r.output.find(std::string("name: ") + crd), std::string::npos) << crd;
}

TEST(DeployManifests, AreTheChartRenderedWithThePlainValues) {
  auto r = run_shell("HELM=" + shell_quote(helm_binary()) + " " +
                     shell_quote(std::string(OCTORUN_DEPLOY_DIR) + "/render.sh") + " --check");
  EXPECT_EQ(r.status, 0) << r.all();
}

}  // namespace
}  // namespace octorun::test
