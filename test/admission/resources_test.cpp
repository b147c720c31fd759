// octorun_model: parsing with errors as values, the generated names and
// their limits, scope URLs, and the effective variants.
#include <gtest/gtest.h>

#include "adapters/github/scope.hpp"
#include "model/naming.hpp"
#include "model/parse.hpp"
#include "model/scope.hpp"
#include "test/admission/fixtures.hpp"

namespace octorun::model {
namespace {

using test::doc;

TEST(ParseRunnerSet, ReadsEveryField) {
  auto set = parse_runnerset(std::string_view(test::valid_runnerset_json()));
  ASSERT_TRUE(set);
  EXPECT_EQ(set->metadata.name, "ci");
  EXPECT_EQ(set->metadata.namespace_, "team");
  EXPECT_EQ(set->spec.scope_url, "https://github.com/acme/app");
  EXPECT_EQ(set->spec.credentials_secret_name, "github-app");
  EXPECT_EQ(set->spec.runner_labels, std::vector<std::string>{"linux"});
  EXPECT_EQ(set->spec.min_runners, 1);
  EXPECT_EQ(set->spec.max_runners, 5);
  EXPECT_FALSE(set->spec.replicas);
  ASSERT_EQ(set->spec.template_.containers.size(), 1u);
  EXPECT_TRUE(set->spec.template_.has_container("runner"));
  EXPECT_EQ(set->spec.template_.labels.at("team"), "a");
  EXPECT_NE(set->spec.template_.json.find("actions-runner"), std::string::npos);
  ASSERT_EQ(set->spec.variants.size(), 2u);
  EXPECT_FALSE(set->spec.variants[0].template_);
  ASSERT_TRUE(set->spec.variants[1].template_);
  EXPECT_EQ(set->spec.variants[1].template_->containers[0].image, "runner:big");
}

TEST(ParseRunnerSet, ReadsStatus) {
  auto set = parse_runnerset(std::string_view(R"({"metadata":{"name":"x"},"status":{
    "observedGeneration":3,"desiredReplicas":4,"replicas":3,"idleRunners":1,"runningRunners":2,
    "selector":"octorun.io/runnerset=x","conditions":[{"type":"Ready","status":"True"}],
    "variants":[{"name":"small","scaleSetId":9007199254740993,"replicas":2}]}})"));
  ASSERT_TRUE(set);
  EXPECT_EQ(set->status.observed_generation, 3);
  EXPECT_EQ(set->status.counts.desired_replicas, 4);
  EXPECT_EQ(set->status.counts.running_runners, 2);
  EXPECT_EQ(set->status.selector, "octorun.io/runnerset=x");
  ASSERT_EQ(set->status.conditions.size(), 1u);
  EXPECT_EQ(set->status.conditions[0].status, "True");
  ASSERT_EQ(set->status.variants.size(), 1u);
  EXPECT_EQ(set->status.variants[0].scale_set_id, 9007199254740993LL);
}

TEST(ParseRunnerSet, ReportsEveryWrongTypeWithItsPath) {
  auto set = parse_runnerset(std::string_view(R"({"metadata":{"name":7},"spec":{"minRunners":"3",
    "maxRunners":1e20,"runnerLabels":["a",5],"template":{"spec":{"containers":[{"name":"runner","image":3}]}},
    "variants":[{"name":"v","minRunners":-1},"oops"]}})"));
  ASSERT_FALSE(set);
  std::vector<std::string> fields;
  for (const auto& e : set.error()) fields.push_back(e.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"metadata.name", "spec.runnerLabels[1]",
                                              "spec.template.spec.containers[0].image", "spec.minRunners",
                                              "spec.maxRunners", "spec.variants[1]"}));
  EXPECT_EQ(set.error()[0].message, "must be a string");
}

TEST(ParseRunnerSet, RejectsNonObjectsAndBadJson) {
  EXPECT_FALSE(parse_runnerset(std::string_view("[1,2]")));
  EXPECT_FALSE(parse_runnerset(std::string_view("{")));
  EXPECT_FALSE(parse_runnerset(std::string_view(R"({"spec":[]})")));
}

TEST(ParseRunner, ReadsSpecAndStatus) {
  auto d = doc(test::valid_runner_json());
  test::set(d, "/status/phase", std::string("Running"));
  test::set(d, "/status/runnerId", 42);
  test::set(d, "/status/job/id", 7);
  test::set(d, "/status/job/repository", std::string("acme/app"));
  test::set(d, "/status/failures/0/reason", std::string("PodFailed"));
  auto r = parse_runner(d);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->spec->variant, "small");
  EXPECT_EQ(r->spec->runner_set_name, "ci");
  EXPECT_EQ(r->status.phase, model::runner_phase::running);
  EXPECT_EQ(r->status.runner_id, 42);
  ASSERT_TRUE(r->status.job);
  EXPECT_EQ(r->status.job->repository, "acme/app");
  ASSERT_EQ(r->status.failures.size(), 1u);
}

// The Runners of a variant carry the same template: decoded, they share one
// copy (a pool of thousands caches a handful), and a different template is
// its own.
TEST(ParseRunner, RunnersWithTheSameSpecShareOneCopy) {
  auto a = parse_runner(doc(test::valid_runner_json()));
  auto b = parse_runner(doc(test::valid_runner_json()));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->spec.get(), b->spec.get());
  EXPECT_FALSE(a->spec->template_.containers.empty());
  auto d = doc(test::valid_runner_json());
  test::set(d, "/spec/template/spec/containers/0/image", std::string("other"));
  auto c = parse_runner(d);
  ASSERT_TRUE(c);
  EXPECT_NE(c->spec.get(), a->spec.get());
  EXPECT_EQ(c->spec->template_.containers[0].image, "other");
  EXPECT_EQ(a->spec->template_.containers[0].image, b->spec->template_.containers[0].image);
  EXPECT_NE(runner{}.spec, nullptr) << "never null";
  // A spec with an error is reported every time, never shared.
  test::set(d, "/spec/runnerLabels", 7);
  EXPECT_FALSE(parse_runner(d));
  EXPECT_FALSE(parse_runner(d));
}

TEST(Naming, DerivesNamesFromTheSetAndVariant) {
  EXPECT_EQ(runner_name_prefix("ci", ""), "ci-");
  EXPECT_EQ(runner_name_prefix("ci", "small"), "ci-small-");
  EXPECT_EQ(runner_name("ci", "small", "x7k2p"), "ci-small-x7k2p");
  EXPECT_EQ(pod_name("ci-x7k2p"), "ci-x7k2p");
  EXPECT_EQ(jit_secret_name("ci-x7k2p"), "ci-x7k2p-jit");
  EXPECT_EQ(selector("ci"), "octorun.io/runnerset=ci");
}

TEST(Naming, MeasuresHowFarGeneratedNamesAreOverTheLimit) {
  // set + '-' + 5 = 63 fits exactly; one more character does not.
  EXPECT_FALSE(generated_name_overflow(std::string(57, 'a'), ""));
  auto over = generated_name_overflow(std::string(58, 'a'), "");
  ASSERT_TRUE(over);
  EXPECT_EQ(over->length, 64u);
  EXPECT_EQ(over->over(), 1u);
  EXPECT_FALSE(generated_name_overflow(std::string(50, 'a'), "123456"));
  auto variant_over = generated_name_overflow(std::string(50, 'a'), "1234567890");
  ASSERT_TRUE(variant_over);
  EXPECT_EQ(variant_over->over(), 4u);
}

TEST(Naming, ChecksDnsLabelsAndSubdomains) {
  EXPECT_TRUE(is_dns_label("small-1"));
  EXPECT_FALSE(is_dns_label("Small"));
  EXPECT_FALSE(is_dns_label("-a"));
  EXPECT_FALSE(is_dns_label("a-"));
  EXPECT_FALSE(is_dns_label("a_b"));
  EXPECT_FALSE(is_dns_label(""));
  EXPECT_FALSE(is_dns_label(std::string(64, 'a')));
  EXPECT_TRUE(is_dns_subdomain("github.app-1"));
  EXPECT_FALSE(is_dns_subdomain("a..b"));
  EXPECT_FALSE(is_dns_subdomain("a."));
  EXPECT_FALSE(is_dns_subdomain(std::string(254, 'a')));
}

TEST(ScopeUrl, AcceptsRepositoriesOrganizationsEnterprisesAndGhes) {
  auto repo = parse_scope_url("https://github.com/acme/app");
  ASSERT_TRUE(repo) << repo.error();
  EXPECT_EQ(repo->kind, github_scope::level::repository);
  EXPECT_EQ(repo->owner, "acme");
  EXPECT_EQ(repo->repository, "app");
  auto org = parse_scope_url("https://github.com/acme/");
  ASSERT_TRUE(org);
  EXPECT_EQ(org->kind, github_scope::level::organization);
  auto ent = parse_scope_url("https://github.com/enterprises/big-co");
  ASSERT_TRUE(ent);
  EXPECT_EQ(ent->kind, github_scope::level::enterprise);
  EXPECT_EQ(ent->owner, "big-co");
  auto ghes = parse_scope_url("https://ghes.example.com:8443/acme/app.js");
  ASSERT_TRUE(ghes);
  EXPECT_EQ(ghes->repository, "app.js");
  EXPECT_TRUE(parse_scope_url("http://127.0.0.1:4000/acme"));  // the GitHub simulator
}

TEST(ScopeUrl, RejectsWhatIsNotAScope) {
  for (const char* bad :
       {"", "github.com/acme", "ftp://github.com/acme", "https://github.com", "https://github.com/",
        "https://github.com/acme/app/tree", "https://github.com/enterprises",
        "https://github.com/enterprises/a/b", "https://github.com/-acme", "https://github.com/ac_me",
        "https://github.com/acme/..", "https://git hub.com/acme", "https://github.com:0/acme",
        "https://github.com:99999/acme", "https://github.com//acme"}) {
    auto s = parse_scope_url(bad);
    EXPECT_FALSE(s) << bad;
    if (!s) {
      EXPECT_NE(s.error().find("expected https://github.com/ORG"), std::string::npos) << s.error();
    }
  }
}

// What a user may paste that is no GitHub scope (issue 32: admission took
// https://github.com/org/app.git as the repository "app.git" and
// https://api.github.com/orgs/x as a GHES host "api.github.com"): refused,
// with the URL meant.
TEST(ScopeUrl, RefusesWhatIsNotAGitHubScopeWithAHint) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"https://github.com/org/app.git",
       "is a clone URL, not a scope; drop the .git suffix: https://github.com/org/app"},
      {"https://api.github.com/orgs/x",
       "is GitHub's API host, not a scope; use the web URL: https://github.com/x"},
      {"https://api.github.com/repos/o/r/",
       "is GitHub's API host, not a scope; use the web URL: https://github.com/o/r"},
      {"https://api.acme.ghe.com/orgs/x",
       "is GitHub's API host, not a scope; use the web URL: https://acme.ghe.com/x"},
      {"https://ghes.example.com/api/v3/orgs/x",
       "is a GitHub Enterprise Server API path, not a scope; use the web URL: https://ghes.example.com/x"},
      {"https://user:pw@github.com/acme",
       "must not carry credentials (USER@HOST): the manager takes them from spec.credentialsSecretName"},
      {"https://github.com/acme/app?x=1", "must not have a query (?...)"},
      {"https://github.com/acme#readme", "must not have a fragment (#...)"},
  };
  for (const auto& [url, why] : cases) {
    auto s = parse_scope_url(url);
    ASSERT_FALSE(s) << url;
    EXPECT_EQ(s.error(), why) << url;
    EXPECT_FALSE(github::parse_config_url(url)) << "the manager took it at use: " << url;
  }
}

TEST(ScopeUrl, PlainHttpAndIpAddressesAreThePlatformsToAllow) {
  const scope_rules none;
  EXPECT_FALSE(scope_host_refused("https://github.com/acme", none));
  EXPECT_FALSE(scope_host_refused("https://ghes.example.com:8443/acme", none));
  EXPECT_TRUE(scope_host_refused("http://github.com/acme", none));
  EXPECT_TRUE(scope_host_refused("https://192.168.1.4/acme", none));
  EXPECT_TRUE(scope_host_refused("https://2130706433/acme", none));
  const scope_rules simulator{{"127.0.0.1", "LocalHost"}};
  EXPECT_FALSE(scope_host_refused("http://127.0.0.1:4000/acme", simulator));
  EXPECT_FALSE(scope_host_refused("http://localhost:4000/acme", simulator));
  EXPECT_TRUE(scope_host_refused("http://127.0.0.10:4000/acme", simulator));
}

// Scheme, host and the "enterprises" keyword are case-insensitive; owner and
// repository are kept as written (GitHub matches them case-insensitively).
TEST(ScopeUrl, CaseInsensitiveSchemeHostAndKeywordNamesAsWritten) {
  auto ent = parse_scope_url("HTTPS://GitHub.COM/Enterprises/Big-Co");
  ASSERT_TRUE(ent) << ent.error();
  EXPECT_EQ(ent->kind, github_scope::level::enterprise);
  EXPECT_EQ(ent->owner, "Big-Co");
  EXPECT_EQ(ent->base_url, "https://GitHub.COM");
  auto repo = parse_scope_url("Http://GHES.example.com/Acme/App");
  ASSERT_TRUE(repo) << repo.error();
  EXPECT_EQ(repo->kind, github_scope::level::repository);
  EXPECT_EQ(repo->owner, "Acme");
  EXPECT_EQ(repo->repository, "App");
  auto target = github::parse_config_url("HTTPS://GitHub.COM/Enterprises/Big-Co/");
  ASSERT_TRUE(target) << target.error();
  EXPECT_EQ(target->api_base, "https://api.github.com");
  EXPECT_EQ(target->where.kind, github::scope_kind::enterprise);
  EXPECT_EQ(target->where.owner, "Big-Co");
  EXPECT_EQ(target->config_url, "https://GitHub.COM/Enterprises/Big-Co");
  EXPECT_EQ(github::parse_config_url("https://GHES.example.com/acme")->api_base,
            "https://GHES.example.com/api/v3");
}

// Whatever the webhook admits, the GitHub adapter can talk to, as the same scope.
TEST(ScopeUrl, AgreesWithTheGitHubAdapter) {
  for (const char* url :
       {"https://github.com/acme", "https://github.com/acme/app", "https://github.com/acme/app/",
        "https://github.com/enterprises/big-co", "https://ghes.example.com:8443/acme/app.js",
        "http://127.0.0.1:4000/acme/app", "https://acme.ghe.com/enterprises/acme",
        "HTTPS://GitHub.com/Enterprises/Big-Co", "https://github.com/Acme/App"}) {
    auto ours = parse_scope_url(url);
    auto theirs = github::parse_config_url(url);
    ASSERT_TRUE(ours) << url;
    ASSERT_TRUE(theirs) << url << ": " << theirs.error();
    EXPECT_EQ(static_cast<int>(ours->kind), static_cast<int>(theirs->where.kind)) << url;
    EXPECT_EQ(ours->owner, theirs->where.owner) << url;
    EXPECT_EQ(ours->repository, theirs->where.repository) << url;
  }
}

TEST(EffectiveVariants, OneDefaultVariantWithoutDeclaredOnes) {
  runnerset_spec spec;
  spec.runner_labels = {"linux"};
  spec.min_runners = 2;
  auto v = effective_variants(spec);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].name, "");
  EXPECT_EQ(v[0].min_runners, 2);
  EXPECT_EQ(v[0].max_runners, default_max_runners);
  EXPECT_EQ(v[0].template_, &spec.template_);
}

TEST(EffectiveVariants, VariantsInheritAndOverride) {
  auto set = parse_runnerset(std::string_view(test::valid_runnerset_json()));
  ASSERT_TRUE(set);
  auto v = effective_variants(set->spec);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].runner_labels, (std::vector<std::string>{"linux", "small"}));
  EXPECT_EQ(v[0].min_runners, 1);
  EXPECT_EQ(v[0].max_runners, 5);
  EXPECT_EQ(v[0].template_, &set->spec.template_);
  EXPECT_EQ(v[1].max_runners, 2);
  EXPECT_EQ(v[1].template_, &*set->spec.variants[1].template_);
}

}  // namespace
}  // namespace octorun::model
