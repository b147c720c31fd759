// Who holds a scale-set name several RunnerSets would register
// (actors/controller/scale_set_claims.hpp, issue 32): the oldest set in one
// GitHub scope, names and scopes compared as GitHub compares them.
#include "actors/controller/scale_set_claims.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "model/scope.hpp"

namespace octorun::controller {
namespace {

using sets_map = std::map<std::string, std::shared_ptr<const model::runnerset>>;

std::shared_ptr<const model::runnerset> listener_set(const std::string& ns, const std::string& name,
                                                     const std::string& scope, const std::string& created,
                                                     std::vector<std::string> variants = {}) {
  auto s = std::make_shared<model::runnerset>();
  s->metadata.namespace_ = ns;
  s->metadata.name = name;
  s->metadata.creation_timestamp = created;
  s->spec.set_scope_url(scope);
  s->spec.intake = model::intake_mode::listener;
  for (auto& v : variants) {
    model::variant_spec vs;
    vs.name = v;
    s->spec.variants.push_back(vs);
  }
  return s;
}

TEST(ScopeIdentity, ScopesGitHubComparesEqualAreOne) {
  auto id = [](const char* url) { return model::scope_identity(*model::parse_scope_url(url)); };
  EXPECT_EQ(id("https://github.com/Org"), id("https://github.com/org"));
  EXPECT_EQ(id("https://GitHub.com/org/"), id("https://github.com:443/ORG"));
  EXPECT_EQ(id("https://github.com/enterprises/Big"), id("https://github.com/ENTERPRISES/big"));
  EXPECT_EQ(id("https://github.com/org/App"), id("https://github.com/ORG/app"));
  EXPECT_NE(id("https://github.com/org"), id("https://github.com/org/app"));
  EXPECT_NE(id("https://github.com/org"), id("https://ghe.example.com/org"));
  EXPECT_NE(id("https://github.com/org"), id("https://github.com/enterprises/org"));
  EXPECT_NE(id("http://ghe.example.com/org"), id("https://ghe.example.com/org"));
}

// The server a scope is on, as a webhook delivery's repository.html_url and
// a set's scope are compared (job_routing.hpp).
TEST(ScopeIdentity, TheServerIsSchemeHostAndPortAsGitHubComparesThem) {
  auto server = [](const char* url) { return model::server_identity(*model::parse_scope_url(url)); };
  EXPECT_EQ(server("https://GitHub.com:443/Org/App"), "https://github.com");
  EXPECT_EQ(server("https://github.com/enterprises/big"), "https://github.com");
  EXPECT_EQ(server("https://ghes.example:8443/org"), "https://ghes.example:8443");
  EXPECT_EQ(server("http://127.0.0.1:80/org"), "http://127.0.0.1");
  EXPECT_NE(server("https://acme.ghe.com/org"), server("https://github.com/org"));
}

// The reported case: two namespaces, equal set names, one organisation
// spelt two ways. The older set holds the name; the younger is told who.
TEST(ScaleSetClaims, TheOldestSetInOneScopeHoldsTheName) {
  sets_map sets{
      {"team-a/linux", listener_set("team-a", "linux", "https://github.com/Org", "2026-01-01T00:00:00Z")},
      {"team-b/linux", listener_set("team-b", "linux", "https://github.com/org", "2025-12-01T00:00:00Z")}};
  auto taken = scale_set_names_taken(sets);
  ASSERT_EQ(taken.size(), 1u);
  ASSERT_EQ(taken.count("team-a/linux"), 1u) << "team-b's set is older";
  EXPECT_EQ(taken["team-a/linux"].at(""), (messages::scale_set_taken{"linux", "team-b/linux"}));
  // The holder goes: the next one takes the name.
  sets.erase("team-b/linux");
  EXPECT_TRUE(scale_set_names_taken(sets).empty());
}

TEST(ScaleSetClaims, NamesCompareCaseInsensitivelyAndAcrossVariants) {
  // Set "ci" with variant "GPU" registers "ci-GPU"; set "CI-gpu" registers "CI-gpu".
  sets_map sets{
      {"a/ci", listener_set("a", "ci", "https://github.com/org", "2026-01-01T00:00:00Z", {"GPU", "cpu"})},
      {"b/CI-gpu", listener_set("b", "CI-gpu", "https://github.com/org", "2026-02-01T00:00:00Z")}};
  auto taken = scale_set_names_taken(sets);
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken["b/CI-gpu"].at(""), (messages::scale_set_taken{"CI-gpu", "a/ci"}));
}

TEST(ScaleSetClaims, TiesGoByNamespaceThenNameAndATimestampBeatsNone) {
  const auto same = "2026-01-01T00:00:00Z";
  sets_map sets{{"b/linux", listener_set("b", "linux", "https://github.com/org", same)},
                {"a/linux", listener_set("a", "linux", "https://github.com/org", same)},
                {"0/linux", listener_set("0", "linux", "https://github.com/org", "")}};
  auto taken = scale_set_names_taken(sets);
  EXPECT_EQ(taken.count("a/linux"), 0u);
  EXPECT_EQ(taken["b/linux"].at("").holder, "a/linux");
  EXPECT_EQ(taken["0/linux"].at("").holder, "a/linux") << "a set without a readable timestamp is the newest";
}

TEST(ScaleSetClaims, OtherScopesServersAndWebhookSetsClaimNothing) {
  auto webhook = std::make_shared<model::runnerset>(
      *listener_set("w", "linux", "https://github.com/org", "2025-01-01T00:00:00Z"));
  webhook->spec.intake = model::intake_mode::webhook;
  sets_map sets{
      {"a/linux", listener_set("a", "linux", "https://github.com/org", "2026-01-01T00:00:00Z")},
      {"b/linux", listener_set("b", "linux", "https://github.com/other", "2025-01-01T00:00:00Z")},
      {"c/linux", listener_set("c", "linux", "https://github.com/org/app", "2025-01-01T00:00:00Z")},
      {"d/linux", listener_set("d", "linux", "https://ghe.example.com/org", "2025-01-01T00:00:00Z")},
      {"e/linux", listener_set("e", "linux", "not a url", "2025-01-01T00:00:00Z")},
      {"w/linux", webhook}};
  EXPECT_TRUE(scale_set_names_taken(sets).empty());
}

// The controller judges the names again only on a change that can move them.
TEST(ScaleSetClaims, OnlyIntakeScopeVariantsAndCreationMoveTheClaims) {
  auto a = *listener_set("a", "linux", "https://github.com/org", "2026-01-01T00:00:00Z", {"x"});
  auto b = a;
  b.spec.min_runners = 3;
  b.status.counts.replicas = 2;
  EXPECT_TRUE(same_claims(a, b));
  b.spec.set_scope_url("https://github.com/other");
  EXPECT_FALSE(same_claims(a, b));
  b = a;
  b.spec.intake = model::intake_mode::webhook;
  EXPECT_FALSE(same_claims(a, b));
  b = a;
  b.spec.variants[0].name = "y";
  EXPECT_FALSE(same_claims(a, b));
}

}  // namespace
}  // namespace octorun::controller
