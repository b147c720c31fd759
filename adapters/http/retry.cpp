#include "adapters/http/retry.hpp"

#include <algorithm>

#include "common/backoff.hpp"

namespace octorun::http {

std::chrono::milliseconds backoff_delay(const retry_policy& p, int attempt, double jitter) {
  return exponential_backoff<std::chrono::milliseconds>{p.base, p.cap, 2.0, equal_jitter}.delay(attempt,
                                                                                                jitter);
}

retry_decision decide_retry(const retry_policy& p, int attempt, const attempt_outcome& outcome,
                            double jitter) {
  if (attempt + 1 >= p.max_attempts) return {};
  if (outcome.advised_wait)
    return {true, std::clamp(*outcome.advised_wait, p.min_advised_wait, p.max_advised_wait)};
  if (outcome.transport_error)
    return p.retry_transport_errors ? retry_decision{true, backoff_delay(p, attempt, jitter)}
                                    : retry_decision{};
  if (outcome.status >= 500 && outcome.status != 501 && p.retry_server_errors)
    return {true, backoff_delay(p, attempt, jitter)};
  return {};
}

}  // namespace octorun::http
