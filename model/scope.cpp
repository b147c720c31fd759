#include "model/scope.hpp"

#include <algorithm>
#include <vector>

#include "adapters/common/strings.hpp"

namespace octorun::model {
namespace {

constexpr const char* expected_forms =
    "expected https://github.com/ORG, https://github.com/ORG/REPO or "
    "https://github.com/enterprises/ENTERPRISE "
    "(any host for GitHub Enterprise Server)";

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

bool valid_host(std::string_view host) {
  auto colon = host.rfind(':');
  if (colon != std::string_view::npos) {
    auto port = host.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    long value = 0;
    for (char c : port) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    if (value == 0 || value > 65535) return false;
    host = host.substr(0, colon);
  }
  if (host.empty() || host.size() > 253 || host.front() == '.' || host.front() == '-') return false;
  for (char c : host)
    if (!is_alnum(c) && c != '.' && c != '-') return false;
  return true;
}

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

}  // namespace

expected<github_scope, std::string> parse_scope_url(std::string_view url) {
  if (url.empty()) return unexpected<std::string>{std::string("is required; ") + expected_forms};
  const std::string lowered = ascii_lower(url.substr(0, std::min<std::size_t>(url.size(), 8)));
  std::string scheme;
  if (lowered.starts_with("https://")) {
    scheme = "https://";
  } else if (lowered.starts_with("http://")) {
    scheme = "http://";
  } else {
    return fail("must start with https://");
  }
  std::string_view rest = url.substr(scheme.size());
  if (rest.find_first_of("?#@ \t\r\n") != std::string_view::npos)
    return fail("must not contain a query, fragment, credentials or spaces");
  auto slash = rest.find('/');
  auto host = rest.substr(0, slash);
  if (!valid_host(host)) return fail("has an invalid host \"" + std::string(host) + "\"");
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  if (path.ends_with('/')) path.remove_suffix(1);
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    auto next = path.find('/');
    parts.push_back(path.substr(0, next));
    if (next == std::string_view::npos) break;
    path.remove_prefix(next + 1);
  }
  github_scope out;
  out.base_url = scheme + std::string(host);
  if (parts.empty()) return fail("names no organization, repository or enterprise");
  for (auto p : parts)
    if (p.empty()) return fail("has an empty path segment");
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
  if (!valid_repository(parts[1]))
    return fail("has an invalid repository name \"" + std::string(parts[1]) + "\"");
  out.kind = github_scope::level::repository;
  out.repository = parts[1];
  return out;
}

}  // namespace octorun::model
