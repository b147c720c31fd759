// What the GitHub caller tells whoever counts its requests (the manager's
// metrics, actors/metrics/manager_metrics.hpp): each HTTP request, by
// endpoint, and the rate-limit budget its answer reported. The endpoint
// naming is pure; the observer is optional (call_options::observer).
#pragma once

#include <string>
#include <string_view>

#include "adapters/github/rate_limit.hpp"

namespace octorun::github {

// "METHOD /path" with every name and id replaced by a placeholder, so that the
// endpoints are a short, fixed list: "POST
// /orgs/{org}/actions/runners/generate-jitconfig", "GET
// /_apis/runtime/runnerscalesets/{id}" (the Actions service's tenant prefix,
// GHES' /api/v3 and the query string left out).
std::string endpoint_of(std::string_view method, std::string_view url);

// "2xx" … "5xx" for an HTTP status; "error" when no response arrived (0).
std::string_view status_class(long status);

class request_observer {
 public:
  virtual ~request_observer() = default;
  // One HTTP request: its endpoint (endpoint_of), the status (0: no
  // response) and the x-ratelimit-* headers of the answer (`present` false
  // when it had none). Called on the caller's thread.
  virtual void observe(std::string_view endpoint, long status, const rate_limit_info& rate) = 0;
};

}  // namespace octorun::github
