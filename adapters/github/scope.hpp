// Where GitHub is and which runners we manage: a scope (model::github_scope,
// parsed once from a configuration URL such as https://github.com/org,
// https://ghes.example/owner/repo or https://github.com/enterprises/name)
// and the REST base URL its API is at.
#pragma once

#include <string>
#include <string_view>

#include "common/expected.hpp"
#include "model/scope.hpp"

namespace octorun::github {

// The one scope type; its API path is scope::api_path().
using scope = model::github_scope;
using scope_kind = model::github_scope::level;

struct github_target {
  std::string config_url;  // as given, without trailing '/'
  std::string api_base;    // https://api.github.com or https://HOST/api/v3
  scope where;
  bool enterprise_server = false;
};

// Where a parsed scope's API lives.
github_target target_for(const scope& where);

// Parses a configuration URL with the one scope parser (model::parse_scope_url:
// one path segment is an organization, "enterprises/<name>" an enterprise,
// "<owner>/<repo>" a repository), then target_for. For callers that hold
// only the text (a set's scope is parsed when the set is decoded).
expected<github_target, std::string> parse_config_url(std::string_view url);

// The REST base for a host: api.<host> for github.com and *.ghe.com, <host>/api/v3 otherwise.
std::string api_base_for(std::string_view scheme, std::string_view host);

// "<api_base><scope.api_path()>/actions/runners".
std::string runners_url(const std::string& api_base, const scope& s);

}  // namespace octorun::github
