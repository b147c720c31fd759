// Credentials for GitHub REST: a personal access token, or a GitHub App whose
// installation token is fetched with an RS256 JWT, cached, and refreshed
// before it expires (or at once after a 401). Thread-safe: the blocking clients
// of several worker threads share one token source.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "adapters/github/caller.hpp"
#include "adapters/github/error.hpp"

namespace octorun::github {

class token_source {
 public:
  virtual ~token_source() = default;
  // The bearer token; refresh=true discards a cached one (after a 401).
  virtual result<std::string> token(api_caller& caller, bool refresh) = 0;
};

std::shared_ptr<token_source> pat_auth(std::string token);

struct app_auth_options {
  std::string issuer;  // the App's client ID (or numeric App ID)
  std::int64_t installation_id = 0;
  std::string private_key_pem;
  std::string api_base;                      // https://api.github.com or https://HOST/api/v3
  std::chrono::seconds refresh_before{300};  // refresh this long before expires_at
};

class app_token_source : public token_source {
 public:
  explicit app_token_source(app_auth_options options) : options_(std::move(options)) {}
  result<std::string> token(api_caller& caller, bool refresh) override;
  int fetches() const;  // installation tokens fetched so far
  std::int64_t expires_at() const;

 private:
  app_auth_options options_;
  mutable std::mutex mutex_;
  std::string token_;
  std::int64_t expires_at_ = 0;
  int fetches_ = 0;
};

std::shared_ptr<app_token_source> app_auth(app_auth_options options);

}  // namespace octorun::github
