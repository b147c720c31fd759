// GitHub failures as values: every call of the REST and scale-set clients
// returns expected<T, github::error>.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"

namespace octorun::github {

enum class error_kind {
  busy,          // the runner is running a job (REST 422 on delete, scale-set JobStillRunning)
  conflict,      // 409: name exists (JIT), session already active
  unauthorized,  // 401 after one refresh
  rate_limited,  // 403/429 with rate-limit headers, or retries exhausted on them
  not_found,     // 404
  rejected,      // any other 4xx: the request itself is wrong
  server_error,  // 5xx after retries
  transport,     // no status line (DNS, connect, TLS, timeout)
  bad_response,  // a 2xx whose body is not what the API documents
  not_ready,     // never sent: the RunnerSet cannot ask GitHub yet (its credentials or scale set)
};

const char* to_string(error_kind k);

// Who holds a runner name GitHub refused to register again (a conflict on a
// JIT request). What to do about it is the caller's decision
// (actors/runner/jit_conflict.hpp), not the client's.
struct name_holder {
  std::int64_t runner_id = 0;
  bool busy = false;                // running a job (the REST API says; the scale-set API does not)
  bool other_scale_set = false;     // registered in another scale set than the one asked for
  std::vector<std::string> labels;  // its label names (the REST API says; the scale-set API: not read)
  // Set by the RunnerSet, never by the clients: it knows the holder as the
  // requesting Runner's own registration (actors/runner/jit_conflict.hpp).
  bool requesters_own = false;
};

struct error {
  error_kind kind = error_kind::bad_response;
  long status = 0;                      // HTTP status; 0 for transport errors
  std::string message;                  // GitHub's message or typeName, or ours
  std::chrono::seconds retry_after{0};  // rate_limited: how long to wait
  std::int64_t reset_epoch = 0;         // rate_limited: x-ratelimit-reset
  // A conflict on a JIT request: the runner holding the name, if found.
  std::optional<name_holder> holder = std::nullopt;

  std::string describe() const;
};

template <class T>
using result = expected<T, error>;

}  // namespace octorun::github
