#include "model/class_rules.hpp"

#include <algorithm>
#include <cctype>

#include "common/strings.hpp"
#include "model/naming.hpp"
#include "model/pod_security.hpp"

namespace octorun::model {
namespace {

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// A key of a Secret's data, as the apiserver allows one.
bool is_secret_key(const std::string& key) {
  if (key.empty() || key.size() > 253) return false;
  for (char ch : key)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') return false;
  return true;
}

std::string listing(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs) out += (out.empty() ? "" : ", ") + x;
  return out;
}

// A spec.github.servers entry, SCHEME://HOST[:PORT] or SCHEME://*.DOMAIN[:PORT]:
// its host in lower case ("*.ghe.com" for a wildcard) and port ("" when none).
struct server_entry {
  std::string scheme, host, port;
  bool wildcard() const { return host.starts_with("*."); }
};

std::optional<server_entry> parse_server(const std::string& server) {
  auto url = split_url(server);
  if (!url) return std::nullopt;
  // "*." is no host character: the entry is checked as a plain host, then put back.
  const bool wildcard = url->host.starts_with("*.");
  if (wildcard) url->host[0] = 'w';
  if (http_url_problem(*url) || url->path.size() > 1) return std::nullopt;
  std::string host = ascii_lower(url->host_name());
  if (wildcard) host[0] = '*';
  return server_entry{url->scheme, std::move(host), std::string(url->port().value_or(""))};
}

bool server_matches(const url_parts& scope, const std::string& server) {
  auto entry = parse_server(server);
  if (!entry || entry->scheme != scope.scheme) return false;
  const auto host = ascii_lower(scope.host_name());
  if (entry->port != scope.port().value_or("")) return false;
  if (!entry->wildcard()) return entry->host == host;
  const auto suffix = entry->host.substr(1);  // ".ghe.com"
  return host.size() > suffix.size() && host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool same_name(const std::string& a, const std::string& b) { return ascii_lower(a) == ascii_lower(b); }

bool scope_matches(const github_scope& scope, const std::string& entry) {
  std::string text = entry;
  const bool prefix = !text.empty() && text.back() == '*';
  if (prefix) text.pop_back();
  std::string repo_prefix;
  if (prefix) {
    // https://HOST/ORG/PREFIX*: the part after the last '/' is a prefix of repository names.
    auto slash = text.rfind('/');
    if (slash == std::string::npos) return false;
    repo_prefix = text.substr(slash + 1);
    text.erase(slash);
  }
  auto want = parse_scope_url(text);
  if (!want || !same_name(want->base_url, scope.base_url)) return false;
  if (prefix) {
    if (want->kind != github_scope::level::organization || scope.kind != github_scope::level::repository)
      return false;
    return same_name(want->owner, scope.owner) &&
           ascii_lower(scope.repository).rfind(ascii_lower(repo_prefix), 0) == 0;
  }
  switch (want->kind) {
    case github_scope::level::enterprise:
      return scope.kind == github_scope::level::enterprise && same_name(want->owner, scope.owner);
    case github_scope::level::organization:
      return scope.kind != github_scope::level::enterprise && same_name(want->owner, scope.owner);
    case github_scope::level::repository:
      return scope.kind == github_scope::level::repository && same_name(want->owner, scope.owner) &&
             same_name(want->repository, scope.repository);
  }
  return false;
}

}  // namespace

std::vector<std::string> default_classes(const std::string& ns, const platform_classes& platform) {
  std::vector<std::string> defaults;
  auto labels = platform.namespace_labels.find(ns);
  for (const auto& [name, c] : platform.classes)
    if (c.is_default && labels != platform.namespace_labels.end() &&
        selector_matches(c.spec.namespace_selector, labels->second))
      defaults.push_back(name);
  return defaults;
}

namespace {

const runner_class* find_class(const platform_classes& platform, const std::string& name) {
  auto it = platform.classes.find(name);
  return it == platform.classes.end() ? nullptr : &it->second;
}

// The class named, else the one default class that admits the namespace
// (a platform may keep a default per group of namespaces); a refusal
// otherwise (nullptr and nothing refused: no class, and the platform allows
// that).
const runner_class* choose(const std::string& ns, const runnerset_spec& spec,
                           const platform_classes& platform, const class_policy& policy, class_verdict& v) {
  if (!spec.runner_class_name.empty()) {
    v.class_name = spec.runner_class_name;
    if (const auto* c = find_class(platform, spec.runner_class_name)) return c;
    v.refused.push_back({"spec.runnerClassName", "names RunnerClass " + quoted(spec.runner_class_name) +
                                                     ", which does not exist: ask the platform team"});
    return nullptr;
  }
  const auto defaults = default_classes(ns, platform);
  if (defaults.size() == 1) {
    v.class_name = defaults.front();
    return find_class(platform, defaults.front());
  }
  if (defaults.size() > 1) {
    v.refused.push_back({"spec.runnerClassName", "is required: RunnerClasses " + listing(defaults) +
                                                     " are all marked default (" + default_class_annotation +
                                                     ") for namespace " + quoted(ns) + ", so name one"});
  } else if (!policy.allow_sets_without_class) {
    v.refused.push_back({"spec.runnerClassName",
                         "is required: no RunnerClass is the default for namespace " + quoted(ns) +
                             " and the platform does not run sets without one (--allow-sets-without-class): "
                             "ask the platform team which to name"});
  } else {
    v.classless = true;
  }
  return nullptr;
}

void judge_credentials(const runnerset_spec& spec, const runner_class& c, class_verdict& v) {
  const auto named = quoted(c.metadata.name);
  if (!spec.credentials_secret_name.empty() && !c.spec.allow_tenant_credentials)
    v.refused.push_back(
        {"spec.credentialsSecretName",
         "must be left out: RunnerClass " + named +
             " does not let a set bring its own credentials (spec.github.allowTenantCredentials)" +
             (c.spec.credentials_secret_name.empty() ? "" : "; it uses the class's")});
  if (spec.credentials_secret_name.empty() && c.spec.credentials_secret_name.empty())
    v.refused.push_back(
        {"spec.credentialsSecretName",
         "is required: RunnerClass " + named + " holds no credentials (spec.github.credentialsSecretName)"});
}

void judge_mode(const std::string& path, const std::optional<container_mode_spec>& mode,
                const runner_class& c, class_verdict& v) {
  const auto type = mode ? mode->type : container_mode::none;
  for (auto allowed : c.spec.effective_container_modes())
    if (allowed == type) return;
  std::string allowed;
  for (auto m : c.spec.effective_container_modes())
    allowed += (allowed.empty() ? "" : ", ") + std::string(to_string(m));
  v.limits.push_back({path, "must not be " + std::string(to_string(type)) + ": RunnerClass " +
                                quoted(c.metadata.name) + " allows " + allowed + " (spec.containerModes)"});
}

void judge_limits(const runnerset_spec& spec, const runner_class& c, class_verdict& v) {
  judge_mode("spec.containerMode.type", spec.pod.container_mode, c, v);
  auto pod_rules = [&](const std::string& path, const pod_template& t) {
    for (auto& e : check_pod_security(path, t, c.spec.pod_security)) {
      e.message += " of RunnerClass " + quoted(c.metadata.name);
      v.limits.push_back(std::move(e));
    }
  };
  pod_rules("spec.template", spec.template_);
  for (std::size_t i = 0; i < spec.variants.size(); ++i) {
    const auto at = "spec.variants[" + std::to_string(i) + "]";
    const auto& variant = spec.variants[i];
    if (variant.container_mode) judge_mode(at + ".containerMode.type", variant.container_mode, c, v);
    if (variant.template_) pod_rules(at + ".template", *variant.template_);
  }
  if (c.spec.max_runners_per_set) {
    std::int64_t total = 0;
    for (const auto& variant : effective_variants(spec)) total += variant.max_runners;
    if (total > *c.spec.max_runners_per_set)
      v.limits.push_back(
          {"spec.maxRunners", "adds up to " + std::to_string(total) + " runners, more than the " +
                                  std::to_string(*c.spec.max_runners_per_set) + " RunnerClass " +
                                  quoted(c.metadata.name) + " allows (spec.maxRunnersPerSet)"});
  }
}

constexpr const char* pem_certificate_start = "-----BEGIN CERTIFICATE-----";

std::string at(const char* list, std::size_t i) { return std::string(list) + "[" + std::to_string(i) + "]"; }

// Why a spec.github.servers entry is not a server; nullopt when it is.
std::optional<std::string> server_problem(const std::string& server, const scope_rules& rules) {
  auto entry = parse_server(server);
  if (!entry) return quoted(server) + " is not https://HOST[:PORT] or https://*.DOMAIN[:PORT] (no path)";
  if (entry->wildcard()) {
    if (entry->scheme != "https") return quoted(server) + ": a wildcard server must be https";
    const auto domain = entry->host.substr(2);
    if (domain.find('.') == std::string::npos)
      return quoted(server) +
             ": a wildcard must stand under a domain of two labels or more (*.ghe.com), not *." + domain;
    return std::nullopt;
  }
  if (auto refused = scope_host_refused(server + "/org", rules)) return quoted(server) + ": " + *refused;
  return std::nullopt;
}

}  // namespace

field_errors check_runner_class(const runner_class& c, const scope_rules& rules) {
  field_errors out;
  const auto& s = c.spec;
  for (std::size_t i = 0; i < s.servers.size(); ++i)
    if (auto problem = server_problem(s.servers[i], rules))
      out.push_back({at("spec.github.servers", i), *problem});
  const auto servers = s.effective_servers();
  for (std::size_t i = 0; i < s.scopes.size(); ++i) {
    std::string entry = s.scopes[i];
    const bool prefix = !entry.empty() && entry.back() == '*';
    if (prefix) entry.pop_back();
    if (entry.find('*') != std::string::npos) {
      out.push_back({at("spec.github.scopes", i), quoted(s.scopes[i]) + ": '*' may only come last"});
      continue;
    }
    auto scope = parse_scope_url(prefix ? entry.substr(0, entry.rfind('/')) : entry);
    if (!scope)
      out.push_back({at("spec.github.scopes", i), scope.error()});
    else if (prefix && scope->kind != github_scope::level::organization)
      out.push_back({at("spec.github.scopes", i),
                     quoted(s.scopes[i]) + ": a '*' may only end a repository name under an organization "
                                           "(https://github.com/ORG/PREFIX*)"});
    else if (!server_allowed(*scope, servers))
      out.push_back({at("spec.github.scopes", i),
                     quoted(s.scopes[i]) + " is on no server the class allows (spec.github.servers: " +
                         listing(servers) + ")"});
  }
  if (!s.credentials_secret_name.empty() && !is_dns_subdomain(s.credentials_secret_name))
    out.push_back({"spec.github.credentialsSecretName",
                   quoted(s.credentials_secret_name) + " is not a Secret name (RFC 1123 subdomain)"});
  if (const auto& proxy = s.connection.proxy) {
    if (auto url = parse_proxy_url(proxy->url); !url) out.push_back({"spec.github.proxy.url", url.error()});
    if (!proxy->credentials_secret_name.empty() && !is_dns_subdomain(proxy->credentials_secret_name))
      out.push_back({"spec.github.proxy.credentialsSecretName",
                     quoted(proxy->credentials_secret_name) + " is not a Secret name (RFC 1123 subdomain)"});
  }
  if (!s.connection.ca_bundle.empty() &&
      s.connection.ca_bundle.find(pem_certificate_start) == std::string::npos)
    out.push_back({"spec.github.caBundle", std::string("holds no PEM certificate (") + pem_certificate_start +
                                               "): give the certificates' PEM text itself, not base64"});
  if (!s.webhook_secret.name.empty() && !is_dns_subdomain(s.webhook_secret.name))
    out.push_back({"spec.github.webhookSecretRef.name",
                   quoted(s.webhook_secret.name) + " is not a Secret name (RFC 1123 subdomain)"});
  if (!s.webhook_secret.name.empty() && !is_secret_key(s.webhook_secret.key))
    out.push_back({"spec.github.webhookSecretRef.key",
                   quoted(s.webhook_secret.key) + " is not a Secret key (letters, digits, '-', '_', '.')"});
  if (s.credentials_secret_name.empty() && !s.allow_tenant_credentials)
    out.push_back(
        {"spec.github.credentialsSecretName",
         "is required unless spec.github.allowTenantCredentials is true: every set would be refused"});
  const auto modes = s.effective_container_modes();
  if (s.pod_security != pod_security_level::privileged &&
      std::find(modes.begin(), modes.end(), container_mode::dind) != modes.end())
    out.push_back({"spec.containerModes",
                   "allows dind, whose Docker daemon is a privileged container: "
                   "podSecurity " +
                       std::string(to_string(s.pod_security)) + " refuses it (use podSecurity privileged)"});
  return out;
}

namespace {

bool url_on_a_server(const url_parts& url, const std::vector<std::string>& servers) {
  for (const auto& server : servers)
    if (server_matches(url, server)) return true;
  return false;
}

}  // namespace

bool server_allowed(const std::string& scope_url, const std::vector<std::string>& servers) {
  auto url = split_http_url(scope_url);
  return url && url_on_a_server(*url, servers);
}

bool server_allowed(const github_scope& scope, const std::vector<std::string>& servers) {
  return url_on_a_server(scope.url, servers);
}

bool scope_allowed(const std::string& scope_url, const std::vector<std::string>& scopes) {
  auto scope = parse_scope_url(scope_url);
  return scope && scope_allowed(*scope, scopes);
}

bool scope_allowed(const github_scope& scope, const std::vector<std::string>& scopes) {
  for (const auto& entry : scopes)
    if (scope_matches(scope, entry)) return true;
  return false;
}

class_verdict judge_set(const std::string& ns, const runnerset_spec& spec, const platform_classes& platform,
                        const class_policy& policy) {
  class_verdict v;
  const auto* c = choose(ns, spec, platform, policy, v);
  if (c == nullptr) {
    if (v.classless && spec.credentials_secret_name.empty())
      v.refused.push_back({"spec.credentialsSecretName", "is required for a set without a RunnerClass"});
    return v;
  }
  const auto named = quoted(c->metadata.name);
  // Its webhook fails open (a cluster admin writes classes): a class that
  // breaks a rule is used by nobody.
  if (auto broken = check_runner_class(*c, policy.scopes); !broken.empty()) {
    v.refused.push_back({"spec.runnerClassName", "names RunnerClass " + named + ", which is invalid (" +
                                                     broken.front().field + ": " + broken.front().message +
                                                     "): ask the platform team"});
    return v;
  }
  auto labels = platform.namespace_labels.find(ns);
  if (labels == platform.namespace_labels.end() ||
      !selector_matches(c->spec.namespace_selector, labels->second))
    v.refused.push_back({"spec.runnerClassName", "RunnerClass " + named + " does not admit namespace " +
                                                     quoted(ns) + " (its spec.namespaceSelector)"});
  const auto servers = c->spec.effective_servers();
  // A URL that names no scope (admission refuses it) is judged by its host alone.
  const bool on_server =
      spec.scope ? server_allowed(*spec.scope, servers) : server_allowed(spec.scope_url, servers);
  if (!on_server)
    v.refused.push_back({"spec.scopeURL", quoted(spec.scope_url) + " is not on a GitHub server RunnerClass " +
                                              named + " allows (spec.github.servers: " + listing(servers) +
                                              ")"});
  else if (!c->spec.scopes.empty() && !(spec.scope && scope_allowed(*spec.scope, c->spec.scopes)))
    v.refused.push_back({"spec.scopeURL", quoted(spec.scope_url) + " is not a scope RunnerClass " + named +
                                              " allows (spec.github.scopes: " + listing(c->spec.scopes) +
                                              ")"});
  const auto where_it_runs = v.refused.size();  // its namespace and its scope
  judge_credentials(spec, *c, v);
  v.drains = where_it_runs > 0 && v.refused.size() == where_it_runs && on_server && spec.scope;
  judge_limits(spec, *c, v);
  v.pod_security = c->spec.pod_security;
  return v;
}

std::vector<effective_variant> variants_under(const runnerset_spec& spec, const class_verdict& verdict) {
  auto variants = effective_variants(spec);
  // The levels whose fields a template may leave out: restricted's, and
  // baseline's seccomp profile (actors/runner/pod_features.cpp).
  if (verdict.pod_security && *verdict.pod_security != pod_security_level::privileged)
    for (auto& v : variants) v.pod.pod_security = verdict.pod_security;
  return variants;
}

credentials_location credentials_of(const std::string& set_ns, const runnerset_spec& spec,
                                    const class_verdict& verdict, const platform_classes& platform,
                                    const std::string& platform_ns) {
  if (!spec.credentials_secret_name.empty() || verdict.class_name.empty())
    return {set_ns, spec.credentials_secret_name, false};
  auto it = platform.classes.find(verdict.class_name);
  if (it == platform.classes.end()) return {};
  return {platform_ns, it->second.spec.credentials_secret_name, true};
}

std::optional<manager_connection> manager_connection_of(const runnerset_spec& spec,
                                                        const std::optional<class_verdict>& verdict,
                                                        const platform_classes& platform) {
  if (!verdict || (!verdict->refused.empty() && !verdict->drains)) return std::nullopt;
  if (verdict->class_name.empty()) return manager_connection{"", {}, spec.pod.proxy, spec.pod.ca_bundle};
  const auto* c = find_class(platform, verdict->class_name);
  if (c == nullptr) return std::nullopt;
  return manager_connection{verdict->class_name, c->spec.connection, std::nullopt, std::nullopt};
}

std::vector<std::string> connection_notes(const runnerset_spec& spec, const class_verdict& verdict,
                                          const platform_classes& platform) {
  std::vector<std::string> out;
  const auto* c = verdict.class_name.empty() ? nullptr : find_class(platform, verdict.class_name);
  if (c == nullptr) return out;
  const auto named = "RunnerClass " + quoted(c->metadata.name);
  const auto& connection = c->spec.connection;
  if (spec.pod.proxy)
    out.push_back(
        "spec.proxy: applies to the runner pods only; the manager's own GitHub connections for this "
        "set " +
        (connection.proxy ? "go through the proxy of " + named + " (spec.github.proxy)"
                          : "follow " + named +
                                ", which names no proxy (spec.github.proxy): the manager's own "
                                "environment decides"));
  if (spec.pod.ca_bundle)
    out.push_back(
        "spec.caBundle: applies to the runner pods only; the manager's own GitHub connections for "
        "this set trust " +
        (connection.ca_bundle.empty()
             ? "the manager's CAs only (" + named + " adds none: spec.github.caBundle)"
             : "the manager's CAs and those of " + named + " (spec.github.caBundle)"));
  return out;
}

}  // namespace octorun::model
