// Where GitHub is and which runners we manage: a configuration URL
// (https://github.com/org, https://ghes.example/owner/repo,
// https://github.com/enterprises/name) becomes a scope and the REST base URL.
#pragma once

#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace octorun::github {

enum class scope_kind { repository, organization, enterprise };

struct scope {
  scope_kind kind = scope_kind::organization;
  std::string owner;       // organization, repository owner, or enterprise slug
  std::string repository;  // repository scope only

  // "/repos/o/r", "/orgs/o" or "/enterprises/e".
  std::string path() const;
  bool operator==(const scope&) const = default;
};

struct github_target {
  std::string config_url;  // as given, without trailing '/'
  std::string api_base;    // https://api.github.com or https://HOST/api/v3
  scope where;
  bool enterprise_server = false;
};

// Parses a configuration URL with the one scope parser (model::parse_scope_url:
// one path segment is an organization, "enterprises/<name>" an enterprise,
// "<owner>/<repo>" a repository) and adds where its API lives.
expected<github_target, std::string> parse_config_url(std::string_view url);

// The REST base for a host: api.<host> for github.com and *.ghe.com, <host>/api/v3 otherwise.
std::string api_base_for(std::string_view scheme, std::string_view host);

// "<api_base><scope.path()>/actions/runners".
std::string runners_url(const std::string& api_base, const scope& s);

}  // namespace octorun::github
