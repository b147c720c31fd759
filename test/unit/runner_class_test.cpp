// model/runner_class, model/class_rules and model/pod_security: what a
// RunnerClass admits, as pure functions.
#include "model/runner_class.hpp"

#include <gtest/gtest.h>

#include "model/class_rules.hpp"
#include "model/namespace_cap.hpp"
#include "model/parse.hpp"
#include "model/pod_security.hpp"

namespace octorun::model {
namespace {

runner_class parsed_class(const std::string& json) {
  auto c = parse_runner_class(json);
  EXPECT_TRUE(c) << (c ? "" : c.error().front().field + ": " + c.error().front().message);
  return c ? *c : runner_class{};
}

runnerset_spec set_spec(const std::string& spec_json) {
  auto s = parse_runnerset(R"({"metadata":{"name":"ci","namespace":"team-a"},"spec":)" + spec_json + "}");
  EXPECT_TRUE(s);
  return s ? s->spec : runnerset_spec{};
}

pod_template template_of(const std::string& spec_json) {
  return set_spec(R"({"template":)" + spec_json + "}").template_;
}

bool mentions(const field_errors& errors, const std::string& field, const std::string& words) {
  for (const auto& e : errors)
    if (e.field == field && e.message.find(words) != std::string::npos) return true;
  return false;
}

std::string all(const field_errors& errors) {
  std::string out;
  for (const auto& e : errors) out += e.field + ": " + e.message + "\n";
  return out;
}

platform_classes platform_with(std::vector<runner_class> classes) {
  platform_classes p;
  for (auto& c : classes) p.classes[c.metadata.name] = std::move(c);
  p.namespace_labels["team-a"] = {{"kubernetes.io/metadata.name", "team-a"}, {"team", "a"}};
  p.namespace_labels["team-b"] = {{"kubernetes.io/metadata.name", "team-b"}, {"team", "b"}};
  return p;
}

const char* team_a_class = R"({"metadata":{"name":"team-a"},"spec":{
  "namespaceSelector":{"matchLabels":{"team":"a"}},
  "github":{"scopes":["https://github.com/acme/web-*","https://github.com/tools"],
            "credentialsSecretName":"acme-app"}}})";

TEST(RunnerClass, ParsesWhatThePlatformDeclares) {
  auto c = parsed_class(R"({"metadata":{"name":"gpu","annotations":{"octorun.io/is-default-class":"true"}},
    "spec":{"namespaceSelector":{"matchExpressions":[{"key":"team","operator":"In","values":["a","b"]}]},
    "github":{"servers":["https://ghes.example.com"],"allowTenantCredentials":true},
    "containerModes":["dind"],"podSecurity":"restricted","maxRunnersPerSet":50}})");
  EXPECT_TRUE(c.is_default);
  EXPECT_EQ(c.spec.effective_servers(), std::vector<std::string>{"https://ghes.example.com"});
  EXPECT_TRUE(c.spec.allow_tenant_credentials);
  EXPECT_EQ(c.spec.effective_container_modes(), std::vector<container_mode>{container_mode::dind});
  EXPECT_EQ(c.spec.pod_security, pod_security_level::restricted);
  EXPECT_EQ(c.spec.max_runners_per_set, 50);
}

TEST(RunnerClass, DefaultsAreGitHubsServersAndNoPrivilegedModes) {
  auto c = parsed_class(R"({"metadata":{"name":"x"},"spec":{"namespaceSelector":{}}})");
  EXPECT_FALSE(c.is_default);
  EXPECT_EQ(c.spec.effective_servers(),
            (std::vector<std::string>{"https://github.com", "https://*.ghe.com"}));
  EXPECT_EQ(c.spec.effective_container_modes(),
            (std::vector<container_mode>{container_mode::none, container_mode::kubernetes}));
  EXPECT_EQ(c.spec.pod_security, pod_security_level::baseline);
  EXPECT_FALSE(c.spec.allow_tenant_credentials);
}

TEST(RunnerClass, RefusesWhatItCannotMean) {
  auto c = parse_runner_class(R"({"metadata":{"name":"x"},"spec":{
    "namespaceSelector":{"matchExpressions":[{"key":"t","operator":"Near","values":["a"]},
                                             {"key":"t","operator":"In"}]},
    "containerModes":["docker"],"podSecurity":"lax","github":{"servers":"github.com"}}})");
  ASSERT_FALSE(c);
  EXPECT_TRUE(mentions(c.error(), "spec.namespaceSelector.matchExpressions[0].operator", "Near"));
  EXPECT_TRUE(mentions(c.error(), "spec.namespaceSelector.matchExpressions[1].values", "must not be empty"));
  EXPECT_TRUE(mentions(c.error(), "spec.containerModes[0]", "docker"));
  EXPECT_TRUE(mentions(c.error(), "spec.podSecurity", "lax"));
  EXPECT_TRUE(mentions(c.error(), "spec.github.servers", "a list"));
  auto no_selector = parse_runner_class(R"({"metadata":{"name":"x"},"spec":{}})");
  ASSERT_FALSE(no_selector);
  EXPECT_TRUE(mentions(no_selector.error(), "spec.namespaceSelector", "{} admits every namespace"));
  EXPECT_FALSE(parse_runner_class("[1]"));
  EXPECT_FALSE(parse_runner_class("{"));
}

// A class's own webhook secret (docs/intakes.md): a key of a Secret in the
// platform's namespace, "secret" unless it says which.
TEST(RunnerClass, NamesItsOwnWebhookSecret) {
  auto c = parsed_class(R"({"metadata":{"name":"team-a"},"spec":{"namespaceSelector":{},
    "github":{"credentialsSecretName":"pat","webhookSecretRef":{"name":"team-a-hook","key":"hmac"}}}})");
  EXPECT_EQ(c.spec.webhook_secret, (secret_key_ref{"team-a-hook", "hmac"}));
  auto keyless = parsed_class(R"({"metadata":{"name":"team-a"},"spec":{"namespaceSelector":{},
    "github":{"credentialsSecretName":"pat","webhookSecretRef":{"name":"team-a-hook"}}}})");
  EXPECT_EQ(keyless.spec.webhook_secret, (secret_key_ref{"team-a-hook", "secret"}));
  EXPECT_TRUE(parsed_class(team_a_class).spec.webhook_secret.name.empty()) << "none: no path of its own";
  auto nameless = parse_runner_class(R"({"metadata":{"name":"x"},"spec":{"namespaceSelector":{},
    "github":{"webhookSecretRef":{"key":"k"}}}})");
  ASSERT_FALSE(nameless);
  EXPECT_TRUE(mentions(nameless.error(), "spec.github.webhookSecretRef.name", "required"));
  auto bad = check_runner_class(parsed_class(R"({"metadata":{"name":"x"},"spec":{"namespaceSelector":{},
        "github":{"credentialsSecretName":"pat","webhookSecretRef":{"name":"Not_A_Name","key":"a b"}}}})"),
                                {});
  EXPECT_TRUE(mentions(bad, "spec.github.webhookSecretRef.name", "RFC 1123")) << all(bad);
  EXPECT_TRUE(mentions(bad, "spec.github.webhookSecretRef.key", "not a Secret key")) << all(bad);
}

TEST(LabelSelector, MatchesAsKubernetesDoes) {
  std::map<std::string, std::string> labels{{"team", "a"}, {"tier", "ci"}};
  EXPECT_TRUE(selector_matches({}, labels));
  EXPECT_TRUE(selector_matches({{{"team", "a"}}, {}}, labels));
  EXPECT_FALSE(selector_matches({{{"team", "b"}}, {}}, labels));
  EXPECT_TRUE(selector_matches({{}, {{"team", "In", {"a", "b"}}}}, labels));
  EXPECT_FALSE(selector_matches({{}, {{"team", "NotIn", {"a"}}}}, labels));
  EXPECT_TRUE(selector_matches({{}, {{"owner", "NotIn", {"a"}}}}, labels));
  EXPECT_TRUE(selector_matches({{}, {{"tier", "Exists", {}}}}, labels));
  EXPECT_FALSE(selector_matches({{}, {{"tier", "DoesNotExist", {}}}}, labels));
  EXPECT_FALSE(selector_matches({{}, {{"tier", "Sounds", {}}}}, labels));
}

TEST(ClassServers, OnlyTheListedHostsOverTheListedScheme) {
  const std::vector<std::string> defaults{"https://github.com", "https://*.ghe.com"};
  EXPECT_TRUE(server_allowed("https://github.com/acme", defaults));
  EXPECT_TRUE(server_allowed("https://GitHub.com/acme/app", defaults));
  EXPECT_TRUE(server_allowed("https://acme.ghe.com/acme", defaults));
  EXPECT_FALSE(server_allowed("https://ghe.com/acme", defaults));
  EXPECT_FALSE(server_allowed("https://evil-ghe.com/acme", defaults));
  EXPECT_FALSE(server_allowed("https://github.com.evil.example/acme", defaults));
  EXPECT_FALSE(server_allowed("http://github.com/acme", defaults));
  EXPECT_FALSE(server_allowed("https://github.com:8443/acme", defaults));
  EXPECT_FALSE(server_allowed("https://kubernetes.default.svc/acme", defaults));
  EXPECT_TRUE(server_allowed("http://127.0.0.1:8080/acme", {"http://127.0.0.1:8080"}));
  EXPECT_FALSE(server_allowed("http://127.0.0.1:8081/acme", {"http://127.0.0.1:8080"}));
  EXPECT_FALSE(server_allowed("https://github.com/acme", {"https://github.com/acme"}));  // not a server
}

TEST(ClassScopes, OrganisationsRepositoriesPrefixesAndEnterprises) {
  const std::vector<std::string> scopes{"https://github.com/tools", "https://github.com/acme/web-*",
                                        "https://github.com/acme/api", "https://github.com/enterprises/big"};
  EXPECT_TRUE(scope_allowed("https://github.com/tools", scopes));
  EXPECT_TRUE(scope_allowed("https://github.com/Tools/anything", scopes));
  EXPECT_TRUE(scope_allowed("https://github.com/acme/web-shop", scopes));
  EXPECT_TRUE(scope_allowed("https://github.com/ACME/Web-Shop", scopes));
  EXPECT_TRUE(scope_allowed("https://github.com/acme/api", scopes));
  EXPECT_FALSE(scope_allowed("https://github.com/acme/api-v2", scopes));
  EXPECT_FALSE(
      scope_allowed("https://github.com/acme", scopes));  // the organisation is more than a repository
  EXPECT_FALSE(scope_allowed("https://github.com/acme/billing", scopes));
  EXPECT_TRUE(scope_allowed("https://github.com/enterprises/big", scopes));
  EXPECT_FALSE(scope_allowed("https://github.com/big", scopes));
  EXPECT_FALSE(scope_allowed("https://acme.ghe.com/tools", scopes));  // another server
  EXPECT_FALSE(scope_allowed("https://github.com/toolsmith", scopes));
}

TEST(JudgeSet, AClassDecidesWhereCredentialsGo) {
  auto p = platform_with({parsed_class(team_a_class)});
  auto ok = judge_set("team-a",
                      set_spec(R"({"runnerClassName":"team-a","scopeURL":"https://github.com/acme/web-shop",
    "template":{"spec":{"containers":[{"name":"runner","image":"r"}]}}})"),
                      p, {});
  EXPECT_TRUE(ok.admitted()) << all(ok.refused) << all(ok.limits);
  EXPECT_EQ(ok.class_name, "team-a");
  auto where = credentials_of(
      "team-a", set_spec(R"({"runnerClassName":"team-a","scopeURL":"https://github.com/tools"})"), ok, p,
      "octorun-system");
  EXPECT_EQ(where.ns, "octorun-system");
  EXPECT_EQ(where.name, "acme-app");
  EXPECT_TRUE(where.platform);

  auto sink = judge_set(
      "team-a", set_spec(R"({"runnerClassName":"team-a","scopeURL":"https://sink.example/acme"})"), p, {});
  EXPECT_TRUE(
      mentions(sink.refused, "spec.scopeURL", "is not on a GitHub server RunnerClass \"team-a\" allows"));
  auto other_org = judge_set(
      "team-a", set_spec(R"({"runnerClassName":"team-a","scopeURL":"https://github.com/acme/billing"})"), p,
      {});
  EXPECT_TRUE(mentions(other_org.refused, "spec.scopeURL", "is not a scope RunnerClass \"team-a\" allows"));
  auto own_secret =
      judge_set("team-a", set_spec(R"({"runnerClassName":"team-a","scopeURL":"https://github.com/tools",
    "credentialsSecretName":"mine"})"),
                p, {});
  EXPECT_TRUE(mentions(own_secret.refused, "spec.credentialsSecretName", "does not let a set bring its own"));
  auto other_namespace = judge_set(
      "team-b", set_spec(R"({"runnerClassName":"team-a","scopeURL":"https://github.com/tools"})"), p, {});
  EXPECT_TRUE(
      mentions(other_namespace.refused, "spec.runnerClassName", "does not admit namespace \"team-b\""));
  auto unknown_namespace = judge_set(
      "team-c", set_spec(R"({"runnerClassName":"team-a","scopeURL":"https://github.com/tools"})"), p, {});
  EXPECT_FALSE(unknown_namespace.refused.empty());
  auto missing = judge_set(
      "team-a", set_spec(R"({"runnerClassName":"gold","scopeURL":"https://github.com/tools"})"), p, {});
  EXPECT_TRUE(mentions(missing.refused, "spec.runnerClassName", "\"gold\", which does not exist"));

  // Written while its webhook did not answer (it fails open): used by nobody.
  auto broken = platform_with({parsed_class(R"({"metadata":{"name":"team-a"},"spec":{"namespaceSelector":{},
    "github":{"servers":["https://*.com"],"credentialsSecretName":"pat"}}})")});
  auto under_broken = judge_set(
      "team-a", set_spec(R"({"runnerClassName":"team-a","scopeURL":"https://evil.com/acme"})"), broken, {});
  EXPECT_TRUE(mentions(under_broken.refused, "spec.runnerClassName",
                       "RunnerClass \"team-a\", which is invalid (spec.github.servers[0]"))
      << all(under_broken.refused);
}

// A class changed under a running set (issue 32's bad input): refused only
// for where it runs, the set drains its idle runners with the server and
// credentials the class still allows; withdrawn server, class or
// credentials leave nothing to drain with.
TEST(JudgeSet, OnlyASetRefusedForItsNamespaceOrScopeDrains) {
  auto p = platform_with({parsed_class(team_a_class)});
  auto judged = [&](const std::string& ns, const std::string& spec) {
    return judge_set(ns, set_spec(spec), p, {});
  };
  auto admitted = judged("team-a", R"({"runnerClassName":"team-a","scopeURL":"https://github.com/tools"})");
  EXPECT_TRUE(admitted.admitted());
  EXPECT_FALSE(admitted.drains) << "nothing to drain: it runs";
  auto other_namespace =
      judged("team-b", R"({"runnerClassName":"team-a","scopeURL":"https://github.com/tools"})");
  EXPECT_TRUE(other_namespace.drains) << all(other_namespace.refused);
  auto other_org =
      judged("team-a", R"({"runnerClassName":"team-a","scopeURL":"https://github.com/acme/billing"})");
  EXPECT_TRUE(other_org.drains) << all(other_org.refused);
  auto both =
      judged("team-b", R"({"runnerClassName":"team-a","scopeURL":"https://github.com/acme/billing"})");
  EXPECT_EQ(both.refused.size(), 2u);
  EXPECT_TRUE(both.drains);
  EXPECT_TRUE(manager_connection_of(set_spec(R"({"runnerClassName":"team-a"})"), other_org, p))
      << "the class's connection removes its runners";

  auto sink = judged("team-a", R"({"runnerClassName":"team-a","scopeURL":"https://sink.example/acme"})");
  EXPECT_FALSE(sink.drains) << "a server the class withdrew is never called";
  EXPECT_FALSE(manager_connection_of(set_spec(R"({"runnerClassName":"team-a"})"), sink, p));
  auto elsewhere_and_sink =
      judged("team-b", R"({"runnerClassName":"team-a","scopeURL":"https://sink.example/acme"})");
  EXPECT_FALSE(elsewhere_and_sink.drains);
  auto own_secret = judged("team-b", R"({"runnerClassName":"team-a","scopeURL":"https://github.com/tools",
    "credentialsSecretName":"mine"})");
  EXPECT_FALSE(own_secret.drains) << "credentials the class refuses are never used";
  EXPECT_FALSE(judged("team-a", R"({"runnerClassName":"gold","scopeURL":"https://github.com/tools"})").drains)
      << "no class: no credentials";
  auto def =
      parsed_class(R"({"metadata":{"name":"standard","annotations":{"octorun.io/is-default-class":"true"}},
    "spec":{"namespaceSelector":{"matchLabels":{"team":"b"}},"github":{"credentialsSecretName":"app"}}})");
  EXPECT_FALSE(
      judge_set("team-a", set_spec(R"({"scopeURL":"https://github.com/x"})"), platform_with({def}), {})
          .drains)
      << "a default class that no longer admits the namespace is no longer its class";
}

TEST(JudgeSet, TenantCredentialsOnlyWhereTheClassLetsThem) {
  auto c = parsed_class(R"({"metadata":{"name":"byo"},"spec":{"namespaceSelector":{},
    "github":{"allowTenantCredentials":true}}})");
  auto p = platform_with({c});
  auto own = judge_set("team-b", set_spec(R"({"runnerClassName":"byo","scopeURL":"https://github.com/x",
    "credentialsSecretName":"mine"})"),
                       p, {});
  EXPECT_TRUE(own.admitted()) << all(own.refused);
  auto where =
      credentials_of("team-b", set_spec(R"({"credentialsSecretName":"mine"})"), own, p, "octorun-system");
  EXPECT_EQ(where.ns, "team-b");
  EXPECT_FALSE(where.platform);
  auto none =
      judge_set("team-b", set_spec(R"({"runnerClassName":"byo","scopeURL":"https://github.com/x"})"), p, {});
  EXPECT_TRUE(mentions(none.refused, "spec.credentialsSecretName", "holds no credentials"));
}

TEST(JudgeSet, SetsWithoutAClassTakeTheDefaultOrWhatThePlatformAllows) {
  auto def =
      parsed_class(R"({"metadata":{"name":"standard","annotations":{"octorun.io/is-default-class":"true"}},
    "spec":{"namespaceSelector":{},"github":{"allowTenantCredentials":true}}})");
  auto spec = set_spec(R"({"scopeURL":"https://github.com/x","credentialsSecretName":"mine"})");
  auto with_default = judge_set("team-a", spec, platform_with({def}), {});
  EXPECT_EQ(with_default.class_name, "standard");
  EXPECT_TRUE(with_default.admitted()) << all(with_default.refused);

  auto refused = judge_set("team-a", spec, platform_with({}), {});
  EXPECT_TRUE(mentions(refused.refused, "spec.runnerClassName", "--allow-sets-without-class"));
  auto allowed =
      judge_set("team-a", spec, platform_with({}), {.allow_sets_without_class = true, .scopes = {}});
  EXPECT_TRUE(allowed.classless);
  EXPECT_TRUE(allowed.admitted());
  auto no_secret = judge_set("team-a", set_spec(R"({"scopeURL":"https://github.com/x"})"), platform_with({}),
                             {.allow_sets_without_class = true, .scopes = {}});
  EXPECT_TRUE(mentions(no_secret.refused, "spec.credentialsSecretName", "is required"));

  auto elsewhere = def;
  elsewhere.spec.namespace_selector.match_labels["team"] = "b";
  auto not_here = judge_set("team-a", spec, platform_with({elsewhere}), {});
  EXPECT_TRUE(mentions(not_here.refused, "spec.runnerClassName", "no RunnerClass is the default"))
      << "a default class is the default only where it admits the namespace";

  auto second = def;
  second.metadata.name = "other";
  auto two = judge_set("team-a", spec, platform_with({def, second}), {});
  EXPECT_TRUE(mentions(two.refused, "spec.runnerClassName", "are all marked default"));
}

// What the set's actor and the job router act on (issue 32: demand goes
// to no set its class refused): before the platform's classes are known,
// only a set naming no class where the platform serves those is judged.
TEST(JudgeSet, AtUseBeforeThePlatformIsKnownOnlyASetWithoutAClassWhereAllowed) {
  const class_policy allow{.allow_sets_without_class = true, .scopes = {}};
  auto spec = set_spec(R"({"scopeURL":"https://github.com/x","credentialsSecretName":"mine"})");
  auto early = judge_set_at_use("team-a", "s", spec, nullptr, allow);
  ASSERT_TRUE(early);
  EXPECT_TRUE(early->classless && early->admitted());
  EXPECT_FALSE(judge_set_at_use("team-a", "s", spec, nullptr, {}))
      << "not judged yet: no demand, no credentials";
  auto named = set_spec(R"({"runnerClassName":"c","scopeURL":"https://github.com/x"})");
  EXPECT_FALSE(judge_set_at_use("team-a", "s", named, nullptr, allow));
  auto p = platform_with({});
  auto judged = judge_set_at_use("team-a", "s", named, &p, allow);
  ASSERT_TRUE(judged);
  EXPECT_EQ(*judged, judge_set("team-a", named, p, allow));
  EXPECT_FALSE(judged->admitted());
}

TEST(JudgeSet, ModesPodSecurityAndCountsAreLimits) {
  auto c = parsed_class(R"({"metadata":{"name":"small"},"spec":{"namespaceSelector":{},
    "github":{"credentialsSecretName":"app"},"maxRunnersPerSet":10}})");
  auto v = judge_set("team-a", set_spec(R"({"runnerClassName":"small","scopeURL":"https://github.com/x",
    "containerMode":{"type":"dind"},"maxRunners":8,
    "template":{"spec":{"hostNetwork":true,"containers":[{"name":"runner","image":"r"}]}},
    "variants":[{"name":"big","maxRunners":4},{"name":"small"}]})"),
                     platform_with({c}), {});
  EXPECT_TRUE(v.refused.empty()) << all(v.refused);
  EXPECT_TRUE(mentions(v.limits, "spec.containerMode.type",
                       "must not be dind: RunnerClass \"small\" allows none, kubernetes"));
  EXPECT_TRUE(mentions(v.limits, "spec.template.spec.hostNetwork",
                       "baseline pod security level of RunnerClass \"small\""));
  EXPECT_TRUE(mentions(v.limits, "spec.maxRunners", "adds up to 12 runners, more than the 10"));
}

TEST(ClassCheck, SaysWhatTheSchemaCannot) {
  auto checked = [](const std::string& spec, const scope_rules& rules = {}) {
    return check_runner_class(
        parsed_class(R"({"metadata":{"name":"c"},"spec":{"namespaceSelector":{},)" + spec + "}}"), rules);
  };
  EXPECT_TRUE(checked(R"("github":{"credentialsSecretName":"pat"})").empty()) << "github.com and *.ghe.com";
  EXPECT_TRUE(
      checked(
          R"("github":{"servers":["https://ghes.corp.example:8443","https://*.ghe.com"],)"
          R"("scopes":["https://ghes.corp.example:8443/acme/web-*","https://acme.ghe.com/enterprises/e"],)"
          R"("allowTenantCredentials":true},"containerModes":["dind"],"podSecurity":"privileged")")
          .empty());

  auto e = checked(R"("github":{"servers":["https://*.com","http://ghes.corp","https://10.0.0.7",)"
                   R"("https://github.com/acme","http://*.corp"],"credentialsSecretName":"pat"})");
  EXPECT_TRUE(mentions(e, "spec.github.servers[0]", "two labels"));
  EXPECT_TRUE(mentions(e, "spec.github.servers[1]", "http"));
  EXPECT_TRUE(mentions(e, "spec.github.servers[2]", "IP"));
  EXPECT_TRUE(mentions(e, "spec.github.servers[3]", "no path"));
  EXPECT_TRUE(mentions(e, "spec.github.servers[4]", "https"));
  EXPECT_TRUE(checked(R"("github":{"servers":["http://127.0.0.1:8080"],"credentialsSecretName":"pat"})",
                      scope_rules{{"127.0.0.1"}})
                  .empty())
      << "where the platform's --github-http-hosts lists the host";

  e = checked(R"("github":{"scopes":["https://github.com/acme/app.git","https://ghes.corp/acme",)"
              R"("https://github.com/acme/web-*/x","https://github.com/acme/web/x*","https://github.com/*"],)"
              R"("credentialsSecretName":"pat"})");
  EXPECT_TRUE(mentions(e, "spec.github.scopes[0]", ".git"));
  EXPECT_TRUE(mentions(e, "spec.github.scopes[1]", "no server the class allows"));
  EXPECT_TRUE(mentions(e, "spec.github.scopes[2]", "last"));
  EXPECT_TRUE(mentions(e, "spec.github.scopes[3]", "organization"));
  EXPECT_EQ(e.size(), 5u);

  e = checked(R"("github":{"credentialsSecretName":"Not_A_Name"})");
  EXPECT_TRUE(mentions(e, "spec.github.credentialsSecretName", "RFC 1123"));
  e = checked(R"("github":{})");
  EXPECT_TRUE(mentions(e, "spec.github.credentialsSecretName", "allowTenantCredentials"));
  e = checked(R"("github":{"credentialsSecretName":"pat"},"containerModes":["none","dind"])");
  EXPECT_TRUE(mentions(e, "spec.containerModes", "privileged"));
}

const char* proxied_class = R"({"metadata":{"name":"egress"},"spec":{"namespaceSelector":{},
  "github":{"credentialsSecretName":"pat","proxy":{"url":"http://egress.corp:3128",
    "credentialsSecretName":"egress-login"},"caBundle":"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"}}})";

TEST(ClassConnection, ParsesTheProxyAndCaBundleOfTheManagersConnections) {
  auto c = parsed_class(proxied_class);
  ASSERT_TRUE(c.spec.connection.proxy);
  EXPECT_EQ(c.spec.connection.proxy->url, "http://egress.corp:3128");
  EXPECT_EQ(c.spec.connection.proxy->credentials_secret_name, "egress-login");
  EXPECT_TRUE(c.spec.connection.ca_bundle.starts_with("-----BEGIN CERTIFICATE-----"));
  auto plain = parsed_class(R"({"metadata":{"name":"x"},"spec":{"namespaceSelector":{}}})");
  EXPECT_EQ(plain.spec.connection, class_connection{}) << "none: the manager's own";
  auto wrong = parse_runner_class(R"({"metadata":{"name":"x"},"spec":{"namespaceSelector":{},
    "github":{"proxy":"http://p:1","caBundle":["pem"]}}})");
  ASSERT_FALSE(wrong);
  EXPECT_TRUE(mentions(wrong.error(), "spec.github.proxy", "object"));
  EXPECT_TRUE(mentions(wrong.error(), "spec.github.caBundle", "string"));
}

TEST(ClassCheck, TheProxyUrlItsSecretAndTheCaBundle) {
  auto checked = [](const std::string& github) {
    return check_runner_class(parsed_class(R"({"metadata":{"name":"c"},"spec":{"namespaceSelector":{},)"
                                           R"("github":{"credentialsSecretName":"pat",)" +
                                           github + "}}}"),
                              {});
  };
  EXPECT_TRUE(check_runner_class(parsed_class(proxied_class), {}).empty());
  EXPECT_TRUE(checked(R"("proxy":{"url":"https://egress.corp"})").empty()) << "an https proxy";
  auto e = checked(R"("proxy":{"url":"egress.corp:3128","credentialsSecretName":"Not_A_Name"})");
  EXPECT_TRUE(
      mentions(e, "spec.github.proxy.url", "\"egress.corp:3128\" must start with http:// or https://"))
      << all(e);
  EXPECT_TRUE(mentions(e, "spec.github.proxy.credentialsSecretName", "\"Not_A_Name\" is not a Secret name"));
  e = checked(R"("proxy":{"url":"http://user:pw@egress.corp:3128"})");
  EXPECT_TRUE(mentions(e, "spec.github.proxy.url", "credentials come from credentialsSecretName")) << all(e);
  e = checked(R"("proxy":{"url":"http://egress.corp:3128/path"})");
  EXPECT_TRUE(mentions(e, "spec.github.proxy.url", "without a path")) << all(e);
  e = checked(R"("proxy":{})");
  EXPECT_TRUE(mentions(e, "spec.github.proxy.url", "is required")) << all(e);
  // Base64 of a PEM file, as a webhook configuration's caBundle takes it.
  e = checked(R"("caBundle":"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t")");
  EXPECT_TRUE(mentions(e, "spec.github.caBundle", "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"))
      << all(e);
  EXPECT_TRUE(mentions(e, "spec.github.caBundle", "not base64"));
}

// A set that sets its own proxy and CA, as a tenant pointing the manager at its sink would.
runnerset_spec set_with_own_proxy(const std::string& class_name) {
  return set_spec(R"({"runnerClassName":")" + class_name + R"(","scopeURL":"https://github.com/acme",
    "proxy":{"https":{"url":"http://sink.tenant:8080","credentialsSecretName":"sink-login"}},
    "caBundle":{"configMapKeyRef":{"name":"sink-ca","key":"ca.crt"}}})");
}

TEST(ManagerConnection, UnderAClassTheClassDecidesNeverTheSet) {
  auto p = platform_with({parsed_class(proxied_class)});
  auto spec = set_with_own_proxy("egress");
  auto verdict = judge_set("team-a", spec, p, {});
  ASSERT_TRUE(verdict.refused.empty()) << all(verdict.refused);
  auto c = manager_connection_of(spec, verdict, p);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->class_name, "egress");
  EXPECT_EQ(c->by_class, p.classes["egress"].spec.connection);
  EXPECT_FALSE(c->set_proxy) << "the tenant's proxy never carries the manager's calls";
  EXPECT_FALSE(c->set_ca_bundle) << "nor does the tenant's CA vouch for them";

  // A class that names neither: the manager's own, still not the set's.
  auto bare = platform_with({parsed_class(team_a_class)});
  auto under_bare = set_with_own_proxy("team-a");
  under_bare.set_scope_url("https://github.com/tools");
  auto bare_verdict = judge_set("team-a", under_bare, bare, {});
  ASSERT_TRUE(bare_verdict.refused.empty()) << all(bare_verdict.refused);
  auto own = manager_connection_of(under_bare, bare_verdict, bare);
  ASSERT_TRUE(own);
  EXPECT_EQ(own->class_name, "team-a");
  EXPECT_EQ(own->by_class, class_connection{});
  EXPECT_FALSE(own->set_proxy);
  EXPECT_FALSE(own->set_ca_bundle);
}

TEST(ManagerConnection, ASetWithoutAClassKeepsItsOwnWhereThePlatformAllowsIt) {
  platform_classes none = platform_with({});
  auto spec = set_with_own_proxy("");
  spec.credentials_secret_name = "mine";
  auto verdict = judge_set("team-a", spec, none, {true, {}});
  ASSERT_TRUE(verdict.classless);
  auto c = manager_connection_of(spec, verdict, none);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->class_name, "");
  EXPECT_EQ(c->set_proxy, spec.pod.proxy) << "the rules from before classes";
  EXPECT_EQ(c->set_ca_bundle, spec.pod.ca_bundle);
}

TEST(ManagerConnection, NoneWhileTheSetIsRefusedUnjudgedOrItsClassIsGone) {
  auto p = platform_with({parsed_class(proxied_class)});
  auto spec = set_with_own_proxy("egress");
  EXPECT_FALSE(manager_connection_of(spec, std::nullopt, p)) << "not judged yet";
  auto refused = judge_set("team-a", set_with_own_proxy("gold"), p, {});
  ASSERT_FALSE(refused.refused.empty());
  EXPECT_FALSE(manager_connection_of(spec, refused, p));
  auto verdict = judge_set("team-a", spec, p, {});
  EXPECT_FALSE(manager_connection_of(spec, verdict, platform_with({})))
      << "a class gone since it was judged: nothing, never the set's own";
}

TEST(ConnectionNotes, SayWhatTheSetsOwnProxyAndCaMeanUnderItsClass) {
  auto p = platform_with({parsed_class(proxied_class), parsed_class(team_a_class)});
  auto spec = set_with_own_proxy("egress");
  auto notes = connection_notes(spec, judge_set("team-a", spec, p, {}), p);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(
      notes[0],
      "spec.proxy: applies to the runner pods only; the manager's own GitHub connections for this set go "
      "through the proxy of RunnerClass \"egress\" (spec.github.proxy)");
  EXPECT_EQ(
      notes[1],
      "spec.caBundle: applies to the runner pods only; the manager's own GitHub connections for this set "
      "trust the manager's CAs and those of RunnerClass \"egress\" (spec.github.caBundle)");
  auto bare = set_with_own_proxy("team-a");
  notes = connection_notes(bare, judge_set("team-a", bare, p, {}), p);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("follow RunnerClass \"team-a\", which names no proxy (spec.github.proxy)"),
            std::string::npos)
      << notes[0];
  EXPECT_NE(notes[1].find("the manager's CAs only (RunnerClass \"team-a\" adds none"), std::string::npos)
      << notes[1];
  auto plain = set_spec(R"({"runnerClassName":"egress","scopeURL":"https://github.com/acme"})");
  EXPECT_TRUE(connection_notes(plain, judge_set("team-a", plain, p, {}), p).empty());
  auto classless = set_with_own_proxy("");
  classless.credentials_secret_name = "mine";
  auto none = platform_with({});
  EXPECT_TRUE(connection_notes(classless, judge_set("team-a", classless, none, {true, {}}), none).empty())
      << "without a class its proxy and CA are the manager's connection's too, as documented";
}

TEST(PodSecurity, BaselineRefusesWhatReachesPastTheContainer) {
  auto t = template_of(R"({"spec":{"hostPID":true,"hostIPC":true,"nodeName":"n1",
    "securityContext":{"sysctls":[{"name":"kernel.msgmax","value":"1"}],"seccompProfile":{"type":"Unconfined"}},
    "volumes":[{"name":"docker","hostPath":{"path":"/var/run/docker.sock"}},{"name":"w","emptyDir":{}}],
    "containers":[{"name":"runner","image":"r","ports":[{"containerPort":80,"hostPort":80}],
      "securityContext":{"privileged":true,"procMount":"Unmasked","capabilities":{"add":["CHOWN","SYS_ADMIN"]}}}],
    "initContainers":[{"name":"i","image":"r","securityContext":{"appArmorProfile":{"type":"Unconfined"}}}]}})");
  auto e = check_pod_security("spec.template", t, pod_security_level::baseline);
  for (const auto* field :
       {"spec.template.spec.hostPID", "spec.template.spec.hostIPC", "spec.template.spec.nodeName",
        "spec.template.spec.securityContext.sysctls[0].name",
        "spec.template.spec.securityContext.seccompProfile.type", "spec.template.spec.volumes[0].hostPath",
        "spec.template.spec.containers[0].ports[0].hostPort",
        "spec.template.spec.containers[0].securityContext.privileged",
        "spec.template.spec.containers[0].securityContext.procMount",
        "spec.template.spec.containers[0].securityContext.capabilities.add[1]",
        "spec.template.spec.initContainers[0].securityContext.appArmorProfile.type"})
    EXPECT_TRUE(mentions(e, field, "baseline pod security level")) << field << "\n" << all(e);
  EXPECT_FALSE(mentions(e, "spec.template.spec.containers[0].securityContext.capabilities.add[0]", ""));
  EXPECT_EQ(e.size(), 11u) << all(e);
  EXPECT_TRUE(check_pod_security("spec.template", t, pod_security_level::privileged).empty());
}

TEST(PodSecurity, RestrictedAlsoRefusesVolumeTypesAndRootSettings) {
  auto t = template_of(R"({"spec":{"securityContext":{"runAsNonRoot":false},
    "volumes":[{"name":"n","nfs":{"server":"s","path":"/"}},{"name":"w","emptyDir":{}}],
    "containers":[{"name":"runner","image":"r","securityContext":{"allowPrivilegeEscalation":true,"runAsUser":0,
      "capabilities":{"add":["CHOWN"]},"seccompProfile":{"type":"Localhost","localhostProfile":"p"}}}]}})");
  auto e = check_pod_security("spec.template", t, pod_security_level::restricted);
  EXPECT_TRUE(mentions(e, "spec.template.spec.securityContext.runAsNonRoot", "restricted"));
  EXPECT_TRUE(mentions(e, "spec.template.spec.volumes[0].nfs", "not a volume type allowed"));
  EXPECT_TRUE(
      mentions(e, "spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation", "true"));
  EXPECT_TRUE(mentions(e, "spec.template.spec.containers[0].securityContext.runAsUser", "0"));
  EXPECT_TRUE(mentions(e, "spec.template.spec.containers[0].securityContext.capabilities.add[0]", "CHOWN"));
  EXPECT_EQ(e.size(), 5u) << all(e);
  EXPECT_TRUE(check_pod_security("spec.template", t, pod_security_level::baseline).empty())
      << all(check_pod_security("spec.template", t, pod_security_level::baseline));
}

}  // namespace
}  // namespace octorun::model
