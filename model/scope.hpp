// The GitHub scope a RunnerSet registers runners with: the one parser of
// configuration URLs, validated for users (each rejection says what is
// wrong). Where the API lives (REST base, GHES) is the GitHub adapter's
// business: github::parse_config_url builds on this parser.
//
// Case: the scheme and the host are case-insensitive (RFC 3986), and so is
// the "enterprises" keyword (GitHub's routes ignore case). Owner and
// repository names are kept as written: GitHub matches them
// case-insensitively, so any spelling names the same account.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "common/url.hpp"

namespace octorun::model {

// A scope URL parsed (parse_scope_url): what a RunnerSet's spec.scopeURL
// names, decoded once with the set (runnerset_spec::scope) and carried
// from there, so no later code reads the URL's text again.
struct github_scope {
  enum class level { repository, organization, enterprise };
  level kind = level::organization;
  std::string owner;       // organization, repository owner or enterprise, as written
  std::string repository;  // empty unless kind == repository
  std::string base_url{};  // scheme://host[:port], the scheme in lower case, the host as written
  url_parts url{};         // the URL split (split_http_url), its path without a trailing '/'

  // The URL as written, less a trailing '/' (what GitHub's scale-set API is given).
  std::string as_written() const { return base_url + url.path; }
  // Its place in GitHub's REST API: "/repos/o/r", "/orgs/o" or "/enterprises/e".
  std::string api_path() const;
  bool operator==(const github_scope&) const = default;
};

// A proxy: http(s)://HOST[:PORT] with an optional trailing slash (path
// cleared). The error quotes the URL and says what is wrong, for a user.
expected<url_parts, std::string> parse_proxy_url(std::string_view url);

// Accepts http(s)://HOST[:PORT]/ORG, /ORG/REPO or /enterprises/ENTERPRISE with
// an optional trailing slash. The error says what is wrong, for a user.
// The admission webhook and the GitHub adapter (github::parse_config_url)
// both use it, so whatever is admitted is a scope the adapter can talk to.
// What is never a GitHub scope is refused with a hint: a repository with a
// .git suffix (a clone URL), an API URL (api.github.com, api.X.ghe.com or a
// GHES /api/v3 path), credentials, a query or a fragment.
expected<github_scope, std::string> parse_scope_url(std::string_view url);

// The one place on GitHub a scope names, as GitHub compares it: the scheme
// and host in lower case (without the scheme's default port), the owner,
// enterprise and repository in lower case. Two scope URLs with one identity
// (https://github.com/Org and https://GitHub.com:443/org) share their
// runners and scale sets on GitHub.
std::string scope_identity(const github_scope& scope);

// The GitHub server a scope is on, as scope_identity compares it
// ("https://github.com", "https://ghes.example:8443"): a webhook delivery
// is routed only to sets on its repository's server.
std::string server_identity(const github_scope& scope);

// What the platform admin allows a scope URL beyond https to a host name
// (manager flag --github-http-hosts, never a RunnerSet field): the hosts a
// scope may reach over plain http or name as an IP address, e.g. a test
// server on 127.0.0.1. Compared without the port, case-insensitively.
struct scope_rules {
  std::vector<std::string> http_hosts;
};

// Why the scope URL's scheme or host is not allowed (plain http, an IP
// address), for a user; nullopt when it is. The admission webhook refuses
// such a RunnerSet, and the manager refuses to send it credentials.
std::optional<std::string> scope_host_refused(std::string_view url, const scope_rules& rules);
std::optional<std::string> scope_host_refused(const github_scope& scope, const scope_rules& rules);

}  // namespace octorun::model
