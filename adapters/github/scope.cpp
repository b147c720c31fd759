#include "adapters/github/scope.hpp"

#include "adapters/http/http_client.hpp"
#include "common/strings.hpp"
#include "model/scope.hpp"

namespace octorun::github {

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
  auto parsed = model::parse_scope_url(url);
  if (!parsed) return unexpected{"invalid GitHub URL '" + std::string(url) + "': " + parsed.error()};
  using level = model::github_scope::level;
  github_target t;
  const auto scheme_end = parsed->base_url.find("://");
  t.api_base = api_base_for(parsed->base_url.substr(0, scheme_end), parsed->base_url.substr(scheme_end + 3));
  t.enterprise_server = t.api_base.ends_with("/api/v3");
  const auto kind = parsed->kind == level::repository     ? scope_kind::repository
                    : parsed->kind == level::organization ? scope_kind::organization
                                                          : scope_kind::enterprise;
  t.where = {kind, parsed->owner, parsed->repository};
  std::string_view path = url.substr(parsed->base_url.size());
  if (path.ends_with('/')) path.remove_suffix(1);
  t.config_url = parsed->base_url + std::string(path);
  return t;
}

std::string runners_url(const std::string& api_base, const scope& s) {
  return api_base + s.path() + "/actions/runners";
}

}  // namespace octorun::github
