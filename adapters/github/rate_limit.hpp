// GitHub rate limits as pure decisions: read the x-ratelimit-* headers, tell a
// rate-limit response from a plain 403, and choose how long to wait before the
// next attempt (Retry-After, then the reset time, then capped jittered
// exponential backoff). The clock and the jitter are parameters.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/http/http_client.hpp"
#include "adapters/http/retry.hpp"

namespace octorun::github {

struct rate_limit_info {
  bool present = false;  // GHES without rate limiting sends none
  std::int64_t limit = -1;
  std::int64_t remaining = -1;
  std::int64_t used = -1;
  std::int64_t reset_epoch = 0;
  std::string resource;
};

rate_limit_info parse_rate_limit(const http::response& r);

// 429, or 403 that GitHub marks as a primary or secondary rate limit.
bool is_rate_limit_response(const http::response& r);

// The shared retry rule's policy (http::retry_policy) and GitHub's own two
// settings.
struct retry_policy : http::retry_policy {
  std::chrono::milliseconds secondary_min{60'000};  // a secondary limit without headers waits this at least
  // A wait longer than this is not slept in the calling thread: the call
  // returns rate_limited with retry_after so that an actor can schedule it.
  std::chrono::milliseconds max_blocking_wait{60'000};
};

using http::retry_decision;

// What to do after attempt number `attempt` (0-based) ended with `r` (or a
// transport error when r is null): http::decide_retry, with GitHub's rate
// limits as the server's advice (Retry-After, then the reset time, then a
// secondary limit's doubling wait). `jitter` is uniform in [0, 1).
retry_decision decide_retry(const retry_policy& p, int attempt, const http::response* r,
                            std::int64_t now_epoch, double jitter);

// The remaining budget seen on the last response, shared by all clients of one
// credential so that the metrics actor can export it.
struct rate_limit_budget {
  std::atomic<std::int64_t> limit{-1};
  std::atomic<std::int64_t> remaining{-1};
  std::atomic<std::int64_t> reset_epoch{0};
  std::atomic<std::int64_t> rate_limited_responses{0};
  void record(const rate_limit_info& info);
};

}  // namespace octorun::github
