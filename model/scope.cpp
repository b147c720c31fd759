#include "model/scope.hpp"

#include <algorithm>
#include <vector>

#include "common/strings.hpp"

namespace octorun::model {
namespace {

constexpr const char* expected_forms =
    "expected https://github.com/ORG, https://github.com/ORG/REPO or "
    "https://github.com/enterprises/ENTERPRISE "
    "(any host for GitHub Enterprise Server)";

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// GitHub account names: letters, digits and single hyphens, at most 39.
bool valid_owner(std::string_view s) {
  if (s.empty() || s.size() > 39 || s.front() == '-' || s.back() == '-') return false;
  for (char c : s)
    if (!is_alnum(c) && c != '-') return false;
  return true;
}

bool valid_repository(std::string_view s) {
  if (s.empty() || s.size() > 100 || s == "." || s == "..") return false;
  for (char c : s)
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

unexpected<std::string> fail(const std::string& why) {
  return unexpected<std::string>{why + "; " + expected_forms};
}

// What is wrong, and the URL meant: no list of forms needed.
unexpected<std::string> hint(const std::string& why, const std::string& meant) {
  return unexpected<std::string>{why + ": " + meant};
}

// Query, fragment and credentials, each named: the one sentence says which
// (a '?' anywhere after the host counts as a query, even after the '#').
std::optional<std::string> forbidden_part(std::string_view url) {
  const auto parts = split_url(url);
  if (!parts) return std::nullopt;
  if (parts->userinfo)
    return "must not carry credentials (USER@HOST): the manager takes them from spec.credentialsSecretName";
  const auto fragment = parts->fragment.value_or("");
  if (parts->query || fragment.find('?') != std::string::npos)
    return std::string("must not have a query (?...)");
  if (parts->fragment) return std::string("must not have a fragment (#...)");
  if (parts->path.find('@') != std::string::npos) return std::string("must not contain '@'");
  return std::nullopt;
}

// The path of an API URL as the web URL names the same scope:
// orgs/X -> X, repos/O/R -> O/R, enterprises/E as it is.
std::string web_path(const std::vector<std::string_view>& parts, std::size_t from) {
  if (parts.size() > from && (ascii_lower(parts[from]) == "orgs" || ascii_lower(parts[from]) == "repos" ||
                              ascii_lower(parts[from]) == "users"))
    ++from;
  std::string out;
  for (std::size_t i = from; i < parts.size() && i < from + 2; ++i) out += "/" + std::string(parts[i]);
  return out;
}

// The host without its port, in lower case.
std::string bare_host(const url_parts& url) { return ascii_lower(url.host_name()); }

bool is_api_host(const std::string& bare) {
  return bare == "api.github.com" || (bare.starts_with("api.") && bare.ends_with(".ghe.com"));
}

// An IP address in any form a resolver takes: its last label all digits
// (127.0.0.1, 2130706433) or hexadecimal (0x7f000001). No DNS name ends so.
bool is_ip_literal(const std::string& bare) {
  auto last = std::string_view(bare).substr(bare.rfind('.') == std::string::npos ? 0 : bare.rfind('.') + 1);
  if (last.empty()) return false;
  if (std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; })) return true;
  return last.size() > 2 && last.starts_with("0x");
}

// Why plain http or an IP address is not allowed (scope_host_refused).
std::optional<std::string> url_host_refused(const url_parts& split, const scope_rules& rules) {
  const auto bare = bare_host(split);
  for (const auto& allowed : rules.http_hosts)
    if (ascii_lower(allowed) == bare) return std::nullopt;
  if (split.scheme != "https")
    return std::string(
        "must start with https:// (plain http only to a host the platform lists in the manager's "
        "--github-http-hosts)");
  if (is_ip_literal(bare))
    return "names the IP address " + bare +
           ": use GitHub's host name (an IP address only where the platform lists it in the manager's "
           "--github-http-hosts)";
  return std::nullopt;
}

}  // namespace

expected<url_parts, std::string> parse_proxy_url(std::string_view url) {
  if (url.empty()) return unexpected<std::string>{std::string("is required: http://HOST:PORT")};
  auto parts = split_http_url(url);
  if (!parts) {
    switch (parts.error()) {
      case url_problem::not_http:
        return unexpected<std::string>{"\"" + std::string(url) + "\" must start with http:// or https://"};
      case url_problem::forbidden_characters:
        return unexpected<std::string>{
            "\"" + std::string(url) +
            "\" must not contain a query, fragment, credentials or spaces (credentials come from "
            "credentialsSecretName)"};
      case url_problem::bad_host:
        return unexpected<std::string>{"\"" + std::string(url) + "\" has an invalid host"};
    }
  }
  // At most a trailing slash (a doubled one passes too, as it always has).
  if (parts->path.size() > 1 && parts->path != "//")
    return unexpected<std::string>{"\"" + std::string(url) +
                                   "\" must be http(s)://HOST[:PORT] without a path"};
  parts->path.clear();
  return *parts;
}

expected<github_scope, std::string> parse_scope_url(std::string_view url) {
  if (url.empty()) return unexpected<std::string>{std::string("is required; ") + expected_forms};
  auto split = split_http_url(url);
  if (!split) {
    switch (split.error()) {
      case url_problem::not_http:
        return fail("must start with https://");
      case url_problem::forbidden_characters:
        if (auto why = forbidden_part(url)) return unexpected<std::string>{*why};
        return fail("must not contain spaces");
      case url_problem::bad_host:
        return fail("has an invalid host \"" + split_url(url)->host + "\"");
    }
  }
  const std::string scheme = split->scheme + "://";
  const std::string& host = split->host;
  std::string_view path = split->path;
  if (path.starts_with('/')) path.remove_prefix(1);
  if (path.ends_with('/')) path.remove_suffix(1);
  github_scope out;
  out.base_url = scheme + std::string(host);
  out.url = *split;
  out.url.path = "/" + std::string(path);
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    auto next = path.find('/');
    parts.push_back(path.substr(0, next));
    if (next == std::string_view::npos) break;
    path.remove_prefix(next + 1);
  }
  for (auto p : parts)
    if (p.empty()) return fail("has an empty path segment");
  const auto bare = bare_host(*split);
  if (is_api_host(bare))
    return hint("is GitHub's API host, not a scope; use the web URL",
                "https://" + bare.substr(4) + (parts.empty() ? "/ORG" : web_path(parts, 0)));
  if (parts.size() >= 2 && ascii_lower(parts[0]) == "api" && ascii_lower(parts[1]) == "v3")
    return hint("is a GitHub Enterprise Server API path, not a scope; use the web URL",
                out.base_url + (parts.size() > 2 ? web_path(parts, 2) : std::string("/ORG")));
  if (parts.empty()) return fail("names no organization, repository or enterprise");
  if (ascii_lower(parts[0]) == "enterprises") {
    if (parts.size() != 2) return fail("names an enterprise without a single ENTERPRISE slug");
    if (!valid_owner(parts[1]))
      return fail("has an invalid enterprise slug \"" + std::string(parts[1]) + "\"");
    out.kind = github_scope::level::enterprise;
    out.owner = parts[1];
    return out;
  }
  if (parts.size() > 2) return fail("has too many path segments");
  if (!valid_owner(parts[0]))
    return fail("has an invalid organization name \"" + std::string(parts[0]) + "\"");
  out.owner = parts[0];
  if (parts.size() == 1) {
    out.kind = github_scope::level::organization;
    return out;
  }
  if (ascii_lower(parts[1]).ends_with(".git") && parts[1].size() > 4)
    return hint("is a clone URL, not a scope; drop the .git suffix",
                out.base_url + "/" + std::string(parts[0]) + "/" +
                    std::string(parts[1].substr(0, parts[1].size() - 4)));
  if (!valid_repository(parts[1]))
    return fail("has an invalid repository name \"" + std::string(parts[1]) + "\"");
  out.kind = github_scope::level::repository;
  out.repository = parts[1];
  return out;
}

std::optional<std::string> scope_host_refused(std::string_view url, const scope_rules& rules) {
  auto split = split_http_url(url);
  if (!split) return std::nullopt;  // parse_scope_url says what is wrong
  return url_host_refused(*split, rules);
}

std::optional<std::string> scope_host_refused(const github_scope& scope, const scope_rules& rules) {
  return url_host_refused(scope.url, rules);
}

std::string github_scope::api_path() const {
  switch (kind) {
    case level::repository:
      return "/repos/" + percent_encode(owner) + "/" + percent_encode(repository);
    case level::organization:
      return "/orgs/" + percent_encode(owner);
    case level::enterprise:
      return "/enterprises/" + percent_encode(owner);
  }
  return {};
}

std::string server_identity(const github_scope& scope) {
  auto base = ascii_lower(scope.base_url);
  auto drop_default_port = [&base](std::string_view scheme, std::string_view port) {
    if (base.starts_with(scheme) && base.ends_with(port) && base.size() > scheme.size() + port.size())
      base.resize(base.size() - port.size());
  };
  drop_default_port("https://", ":443");
  drop_default_port("http://", ":80");
  return base;
}

std::string scope_identity(const github_scope& scope) {
  const auto base = server_identity(scope);
  switch (scope.kind) {
    case github_scope::level::enterprise:
      return base + "/enterprises/" + ascii_lower(scope.owner);
    case github_scope::level::organization:
      return base + "/" + ascii_lower(scope.owner);
    case github_scope::level::repository:
      break;
  }
  return base + "/" + ascii_lower(scope.owner) + "/" + ascii_lower(scope.repository);
}

}  // namespace octorun::model
