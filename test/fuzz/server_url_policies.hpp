// For the fuzz targets of URLs a server hands back: the three kinds of
// configured GitHub, and what an accepted URL must be.
#pragma once

#include <string_view>

#include "adapters/github/server_urls.hpp"
#include "adapters/http/http_client.hpp"
#include "common/url.hpp"

namespace octorun::fuzz {

// github.com, an Enterprise Server, a plain-HTTP simulator, by `which` % 3.
inline const github::server_url_policy& policy_for_kind(int which) {
  using namespace octorun::github;
  static const server_url_policy policies[] = {
      server_url_policy_for(*parse_config_url("https://github.com/octo")),
      server_url_policy_for(*parse_config_url("https://ghes.example/octo/app")),
      server_url_policy_for(*parse_config_url("http://127.0.0.1:8080/octo")),
  };
  return policies[which % 3];
}

// An accepted URL has an allowed scheme and no credentials in its authority.
inline void check_accepted(std::string_view url, const github::server_url_policy& p) {
  const auto scheme = url_scheme(url);
  if (scheme != "https" && !(scheme == "http" && p.plain_http)) __builtin_trap();
  auto rest = url.substr(scheme.size() + 3);
  if (rest.substr(0, rest.find_first_of("/?#")).find('@') != std::string_view::npos) __builtin_trap();
}

}  // namespace octorun::fuzz
