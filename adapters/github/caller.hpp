// One blocking HTTP caller for GitHub (REST and the Actions service): wraps
// http::client with retries on transport errors, 5xx and rate limits (capped,
// jittered; long waits returned to the caller instead of slept), records the
// rate-limit budget, and turns failed responses into github::error values.
// One per thread, like http::client.
#pragma once

#include <rapidjson/document.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "adapters/github/error.hpp"
#include "adapters/github/rate_limit.hpp"
#include "adapters/github/request_metrics.hpp"
#include "adapters/http/http_client.hpp"

namespace octorun::github {

// Whether a set's clients reach GitHub, as far as configuration goes: the
// last attempt's TLS or proxy problem (which no retry fixes), cleared by the
// next response. Shared by the clients of one RunnerSet, like
// rate_limit_budget; its actor reads it into the CredentialsReady condition.
class connection_health {
 public:
  void record_problem(std::string why) {
    std::lock_guard l(mu_);
    problem_ = std::move(why);
  }
  void record_response() {
    std::lock_guard l(mu_);
    problem_.clear();
  }
  std::string problem() const {
    std::lock_guard l(mu_);
    return problem_;
  }

 private:
  mutable std::mutex mu_;
  std::string problem_;
};

struct call_options {
  retry_policy retry;
  http::tls_options tls;
  // The proxy chosen explicitly (the manager's environment or the set's
  // spec.proxy); none: libcurl's own reading of the environment.
  std::optional<http::proxy_options> proxy;
  std::shared_ptr<connection_health> health;  // optional
  // Plain http:// besides https:// (http::client::set_plain_http): set by
  // rest_client when the configured GitHub URL is http:// itself.
  bool plain_http = false;
  std::string user_agent = "octorun/0.1";
  std::chrono::milliseconds timeout{30'000};
  std::shared_ptr<rate_limit_budget> budget;  // optional, shared by the clients of one credential
  // Told of every HTTP attempt (the manager's metrics). None: nobody.
  std::shared_ptr<request_observer> observer;
  // Injectable for tests; defaults: this_thread::sleep_for, system clock, uniform [0,1).
  std::function<void(std::chrono::milliseconds)> sleep;
  std::function<std::int64_t()> now;
  std::function<double()> jitter;
};

// Supplies the Authorization header value for an attempt; refresh=true after a 401.
using authorizer = std::function<result<std::string>(bool refresh)>;

class api_caller {
 public:
  explicit api_caller(call_options options);

  // Sends `req` until it gets a response that is not worth retrying, and
  // returns that response whatever its status. A 401 refreshes the
  // authorization once (when `auth` is given). Only transport failures and
  // authorization failures come back as errors.
  result<http::response> perform(http::request req, const authorizer& auth = {});

  std::int64_t now() const { return options_.now(); }
  const call_options& options() const { return options_; }
  const rate_limit_info& last_rate_limit() const { return last_; }
  int attempts() const { return attempts_; }  // HTTP attempts made so far
  // While set, a transfer in flight stops (and is not retried); nullptr: none.
  void set_cancel_flag(const std::atomic<bool>* flag) { client_.set_cancel_flag(flag); }

 private:
  call_options options_;
  http::client client_;
  rate_limit_info last_;
  int attempts_ = 0;
};

// The error for a response the API did not document as success.
// Message: GitHub's "message" (REST) or the service's "typeName: message".
error error_from_response(const http::response& r, std::int64_t now_epoch, const retry_policy& p);

// The body of a response as a JSON object (a leading UTF-8 BOM skipped, the
// limits of json::parse); bad_response otherwise.
result<rapidjson::Document> json_object(const http::response& r);

// The longest error text of a response that reaches an error (and so an
// Event or a condition).
inline constexpr std::size_t max_error_message_bytes = 256;

// "message" of a REST error body, "typeName: message" of a service error, or
// a JSON string body: GitHub's words, at most max_error_message_bytes,
// control characters made spaces. Any other body is described, never quoted.
std::string error_message(const http::response& r);
std::string error_type_name(const http::response& r);

}  // namespace octorun::github
