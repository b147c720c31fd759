#include "adapters/github/scope.hpp"

#include "common/strings.hpp"

namespace octorun::github {

std::string api_base_for(std::string_view scheme, std::string_view host) {
  std::string h = ascii_lower(host);
  std::string bare = h.substr(0, h.find(':'));
  if (bare == "github.com" || bare == "www.github.com") return std::string(scheme) + "://api.github.com";
  if (bare == "github.localhost" || bare.ends_with(".ghe.com")) return std::string(scheme) + "://api." + h;
  return std::string(scheme) + "://" + std::string(host) + "/api/v3";
}

github_target target_for(const scope& where) {
  github_target t;
  t.api_base = api_base_for(where.url.scheme, where.url.host);
  t.enterprise_server = t.api_base.ends_with("/api/v3");
  t.where = where;
  t.config_url = where.as_written();
  return t;
}

expected<github_target, std::string> parse_config_url(std::string_view url) {
  auto parsed = model::parse_scope_url(url);
  if (!parsed) return unexpected{"invalid GitHub URL '" + std::string(url) + "': " + parsed.error()};
  return target_for(*parsed);
}

std::string runners_url(const std::string& api_base, const scope& s) {
  return api_base + s.api_path() + "/actions/runners";
}

}  // namespace octorun::github
