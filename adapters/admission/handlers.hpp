// What each webhook endpoint decides for one AdmissionReview (pure, no I/O).
#pragma once

#include <string>
#include <string_view>

#include "adapters/admission/policy.hpp"
#include "adapters/admission/review.hpp"

namespace octorun::admission {

enum class endpoint { mutate_runnerset, validate_runnerset, validate_runner, validate_runnerclass };

// The URL path each endpoint is served on.
const char* path_of(endpoint e);

// The decision for one parsed request under the platform's `policy`.
admission_response review(endpoint e, const admission_request& request, const admission_policy& policy);

// A whole exchange: the POSTed body in, the HTTP status and body out. A body
// that is not an AdmissionReview v1 gets 400 (the apiserver then applies the
// webhook's failurePolicy).
struct http_reply {
  int status;
  std::string body;
};
http_reply handle_review(endpoint e, std::string_view body, const admission_policy& policy);

}  // namespace octorun::admission
