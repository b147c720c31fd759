#include "adapters/github/auth.hpp"

#include "adapters/github/crypto.hpp"
#include "common/json.hpp"
#include "common/json_parse.hpp"
#include "common/rfc3339.hpp"

namespace octorun::github {
namespace {

class pat_token_source : public token_source {
 public:
  explicit pat_token_source(std::string token) : token_(std::move(token)) {}
  result<std::string> token(api_caller&, bool) override { return token_; }

 private:
  std::string token_;
};

}  // namespace

std::shared_ptr<token_source> pat_auth(std::string token) {
  return std::make_shared<pat_token_source>(std::move(token));
}

std::shared_ptr<app_token_source> app_auth(app_auth_options options) {
  return std::make_shared<app_token_source>(std::move(options));
}

int app_token_source::fetches() const {
  std::lock_guard lock(mutex_);
  return fetches_;
}

std::int64_t app_token_source::expires_at() const {
  std::lock_guard lock(mutex_);
  return expires_at_;
}

result<std::string> app_token_source::token(api_caller& caller, bool refresh) {
  std::lock_guard lock(mutex_);  // held while fetching: other workers wait for the same token
  const std::int64_t now = caller.now();
  if (!refresh && !token_.empty() && now + options_.refresh_before.count() < expires_at_) return token_;
  auto jwt = make_app_jwt(options_.private_key_pem, options_.issuer, now);
  if (!jwt) return unexpected{error{error_kind::unauthorized, 0, jwt.error()}};
  http::request req;
  req.method = "POST";
  req.url =
      options_.api_base + "/app/installations/" + std::to_string(options_.installation_id) + "/access_tokens";
  req.headers = {{"Authorization", "Bearer " + *jwt},
                 {"Accept", "application/vnd.github+json"},
                 {"X-GitHub-Api-Version", "2022-11-28"}};
  auto resp = caller.perform(req);
  if (!resp) return unexpected{resp.error()};
  if (resp->status != 201) {
    auto e = error_from_response(*resp, now, caller.options().retry);
    e.message = "installation token: " + e.message;
    return unexpected{e};
  }
  auto d = json::parse(resp->body, json::sources::github_response);
  if (!d)
    return unexpected{
        error{error_kind::bad_response, resp->status, "installation token response: " + d.error()}};
  auto token = json::str(*d, "token");
  auto expires = parse_rfc3339(json::str(*d, "expires_at"));
  if (token.empty() || !expires)
    return unexpected{
        error{error_kind::bad_response, resp->status, "installation token response lacks token/expires_at"}};
  token_ = token;
  expires_at_ = *expires;
  ++fetches_;
  return token_;
}

}  // namespace octorun::github
