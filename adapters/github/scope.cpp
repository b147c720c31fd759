#include "adapters/github/scope.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "adapters/common/strings.hpp"
#include "adapters/http/http_client.hpp"

namespace octorun::github {
namespace {

bool valid_segment(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

std::string scope::path() const {
  switch (kind) {
    case scope_kind::repository:
      return "/repos/" + http::url_encode(owner) + "/" + http::url_encode(repository);
    case scope_kind::organization:
      return "/orgs/" + http::url_encode(owner);
    case scope_kind::enterprise:
      return "/enterprises/" + http::url_encode(owner);
  }
  return {};
}

std::string api_base_for(std::string_view scheme, std::string_view host) {
  std::string h = ascii_lower(host);
  std::string bare = h.substr(0, h.find(':'));
  if (bare == "github.com" || bare == "www.github.com") return std::string(scheme) + "://api.github.com";
  if (bare == "github.localhost" || bare.ends_with(".ghe.com")) return std::string(scheme) + "://api." + h;
  return std::string(scheme) + "://" + std::string(host) + "/api/v3";
}

expected<github_target, std::string> parse_config_url(std::string_view url) {
  auto fail = [&](const char* why) {
    return unexpected{std::string("invalid GitHub URL '") + std::string(url) + "': " + why};
  };
  auto sep = url.find("://");
  if (sep == std::string_view::npos) return fail("no scheme");
  std::string scheme = ascii_lower(url.substr(0, sep));
  if (scheme != "https" && scheme != "http") return fail("scheme must be http or https");
  std::string_view rest = url.substr(sep + 3);
  auto slash = rest.find('/');
  std::string_view host = rest.substr(0, slash);
  if (host.empty()) return fail("no host");
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (path.find_first_of("?#") != std::string_view::npos) return fail("query or fragment not allowed");
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    if (path.empty()) break;
    auto next = path.find('/');
    parts.push_back(path.substr(0, next));
    path = next == std::string_view::npos ? std::string_view{} : path.substr(next);
  }
  github_target t;
  t.api_base = api_base_for(scheme, host);
  t.enterprise_server = t.api_base.ends_with("/api/v3");
  if (parts.size() == 1) {
    t.where = {scope_kind::organization, std::string(parts[0]), {}};
  } else if (parts.size() == 2 && ascii_lower(parts[0]) == "enterprises") {
    t.where = {scope_kind::enterprise, std::string(parts[1]), {}};
  } else if (parts.size() == 2) {
    t.where = {scope_kind::repository, std::string(parts[0]), std::string(parts[1])};
  } else {
    return fail("expected /<org>, /<owner>/<repo> or /enterprises/<name>");
  }
  for (auto p : parts)
    if (!valid_segment(p)) return fail("bad path segment");
  t.config_url = scheme + "://" + std::string(host);
  for (auto p : parts) t.config_url += "/" + std::string(p);
  return t;
}

std::string runners_url(const std::string& api_base, const scope& s) {
  return api_base + s.path() + "/actions/runners";
}

}  // namespace octorun::github
