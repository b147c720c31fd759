// The chart's NetworkPolicy (templates/manager-networkpolicy.yaml), rendered:
// which port is open to whom, by default and with each value, and that the
// probes need no rule (they listen on loopback). The API server takes the
// rendered objects in chart_install_test.cpp (a server-side dry run).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/chart/helm.hpp"

namespace octorun::test {
namespace {

YAML::Node policy(const std::string& flags) {
  auto r = render(flags);
  EXPECT_EQ(r.result.status, 0) << flags << "\n" << r.result.all();
  auto p = r.find("NetworkPolicy", "octorun-manager");
  EXPECT_TRUE(p.has_value()) << flags;
  return p ? (*p)["spec"] : YAML::Node();
}

// The ingress rule that opens `port`; null when none does.
YAML::Node rule_for(const YAML::Node& spec, int port) {
  for (const auto& rule : spec["ingress"])
    for (const auto& p : rule["ports"])
      if (p["port"].as<int>() == port) return rule;
  return YAML::Node();
}

std::vector<int> open_ports(const YAML::Node& spec) {
  std::vector<int> ports;
  for (const auto& rule : spec["ingress"])
    for (const auto& p : rule["ports"]) ports.push_back(p["port"].as<int>());
  return ports;
}

TEST(ChartNetworkPolicy, ByDefaultOpensMetricsToTheMonitoringNamespaceAndAdmissionOnly) {
  auto spec = policy("");
  EXPECT_EQ(spec["podSelector"]["matchLabels"]["app.kubernetes.io/component"].as<std::string>(), "manager");
  ASSERT_EQ(spec["policyTypes"].size(), 1u) << "egress stays open by default";
  EXPECT_EQ(spec["policyTypes"][0].as<std::string>(), "Ingress");
  // Metrics and admission only: the probes (8082, loopback) need no rule,
  // and the intake is off by default.
  EXPECT_EQ(open_ports(spec), (std::vector<int>{8081, 9443}));
  auto metrics = rule_for(spec, 8081);
  ASSERT_EQ(metrics["from"].size(), 1u);
  EXPECT_EQ(
      metrics["from"][0]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"].as<std::string>(),
      "monitoring");
  // Without the API server's addresses, admission is open to any source.
  EXPECT_FALSE(rule_for(spec, 9443)["from"]);
}

TEST(ChartNetworkPolicy, NarrowsEachPortToTheValuesGiven) {
  auto spec = policy(
      "--set githubWebhook.enabled=true --set githubWebhook.secret=s"
      " --set networkPolicy.metrics.namespaceSelector.matchLabels.team=observability"
      " --set networkPolicy.metrics.podSelector.matchLabels.app=prometheus"
      " --set networkPolicy.admission.ipBlocks={10.0.0.10/32,10.0.0.11/32}"
      " --set networkPolicy.githubWebhook.namespaceSelector.matchLabels.ingress=yes"
      " --set networkPolicy.githubWebhook.podSelector.matchLabels.app=ingress"
      " --set networkPolicy.githubWebhook.ipBlocks={192.30.252.0/22}");
  EXPECT_EQ(open_ports(spec), (std::vector<int>{8081, 9443, 8080}));
  auto metrics = rule_for(spec, 8081)["from"][0];
  EXPECT_EQ(metrics["namespaceSelector"]["matchLabels"]["team"].as<std::string>(), "observability");
  EXPECT_EQ(metrics["podSelector"]["matchLabels"]["app"].as<std::string>(), "prometheus");
  auto admission = rule_for(spec, 9443)["from"];
  ASSERT_EQ(admission.size(), 2u);
  EXPECT_EQ(admission[0]["ipBlock"]["cidr"].as<std::string>(), "10.0.0.10/32");
  EXPECT_EQ(admission[1]["ipBlock"]["cidr"].as<std::string>(), "10.0.0.11/32");
  auto intake = rule_for(spec, 8080)["from"];
  ASSERT_EQ(intake.size(), 2u);
  EXPECT_EQ(intake[0]["namespaceSelector"]["matchLabels"]["ingress"].as<std::string>(), "yes");
  EXPECT_EQ(intake[0]["podSelector"]["matchLabels"]["app"].as<std::string>(), "ingress");
  EXPECT_EQ(intake[1]["ipBlock"]["cidr"].as<std::string>(), "192.30.252.0/22");
}

TEST(ChartNetworkPolicy, RestrictsEgressOnlyWhenAValueNarrowsIt) {
  auto spec = policy("--set-json 'networkPolicy.egress=[{\"to\":[{\"ipBlock\":{\"cidr\":\"0.0.0.0/0\"}}]}]'");
  ASSERT_EQ(spec["policyTypes"].size(), 2u);
  EXPECT_EQ(spec["policyTypes"][1].as<std::string>(), "Egress");
  EXPECT_EQ(spec["egress"][0]["to"][0]["ipBlock"]["cidr"].as<std::string>(), "0.0.0.0/0");
}

TEST(ChartNetworkPolicy, IsLeftOutWhenSwitchedOff) {
  auto r = render("--set networkPolicy.enabled=false");
  ASSERT_EQ(r.result.status, 0) << r.result.all();
  EXPECT_TRUE(r.all("NetworkPolicy").empty());
}

}  // namespace
}  // namespace octorun::test
