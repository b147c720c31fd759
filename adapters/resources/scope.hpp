// The GitHub scope a RunnerSet registers runners with, validated for users:
// each rejection says what is wrong. Where the API lives (REST base, GHES)
// is the GitHub adapter's business: github::parse_config_url.
#pragma once

#include <string>
#include <string_view>

#include "adapters/common/expected.hpp"

namespace octorun::resources {

struct github_scope {
  enum class level { repository, organization, enterprise };
  level kind = level::organization;
  std::string base_url;    // scheme://host[:port]
  std::string owner;       // organization or enterprise
  std::string repository;  // empty unless kind == repository
  bool github_com = false;
};

// Accepts http(s)://HOST[:PORT]/ORG, /ORG/REPO or /enterprises/ENTERPRISE with
// an optional trailing slash. The error says what is wrong, for a user.
// This is the admission rule; API endpoints come from the GitHub adapter's
// github::parse_config_url, which accepts every URL this accepts, with the
// same scope (test/admission/resources_test.cpp pins that).
expected<github_scope, std::string> parse_scope_url(std::string_view url);

}  // namespace octorun::resources
