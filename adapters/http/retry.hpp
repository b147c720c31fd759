// The one retry rule of both clients (GitHub's and the Kubernetes API's):
// after a failed attempt, whether to try again and after how long. Pure:
// the attempt's outcome, the server's advice and the jitter are parameters.
//
// A server that says how long to wait (Retry-After, GitHub's rate-limit
// reset) is obeyed within the policy's bounds; without advice, transport
// errors and server errors back off exponentially with equal jitter, where
// the policy retries them at all. Everything else is the caller's answer.
#pragma once

#include <chrono>
#include <optional>

namespace octorun::http {

struct retry_policy {
  int max_attempts = 5;                   // attempts in total, the first included
  std::chrono::milliseconds base{1000};   // unadvised: base * 2^attempt ...
  std::chrono::milliseconds cap{30'000};  // ... capped here, then jittered
  // A server's advised wait is kept within these.
  std::chrono::milliseconds min_advised_wait{0};
  std::chrono::milliseconds max_advised_wait{std::chrono::hours(24)};
  // Without advice: retry a failed connection, and a 5xx other than 501?
  bool retry_transport_errors = true;
  bool retry_server_errors = true;
};

// How an attempt ended. `advised_wait` is set when the server asked to be
// retried after a time (a throttled answer); the caller decides what counts
// as that, since GitHub and Kubernetes signal it differently.
struct attempt_outcome {
  bool transport_error = false;
  long status = 0;  // the HTTP status, when there was an answer
  std::optional<std::chrono::milliseconds> advised_wait;
};

struct retry_decision {
  bool retry = false;
  std::chrono::milliseconds wait{0};
};

// What to do after attempt number `attempt` (0-based) ended as `outcome`.
// `jitter` is uniform in [0, 1).
retry_decision decide_retry(const retry_policy& p, int attempt, const attempt_outcome& outcome,
                            double jitter);

// Exponential backoff with "equal jitter": half fixed, half random, capped.
std::chrono::milliseconds backoff_delay(const retry_policy& p, int attempt, double jitter);

}  // namespace octorun::http
