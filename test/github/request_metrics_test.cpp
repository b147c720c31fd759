// How the GitHub caller names its requests for the metrics
// (adapters/github/request_metrics.hpp): a short, fixed list of endpoints,
// whatever the organisation, repository, runner or scale set.
#include "adapters/github/request_metrics.hpp"

#include <gtest/gtest.h>

namespace octorun::github {
namespace {

TEST(GithubEndpoint, NamesAndIdsBecomePlaceholders) {
  EXPECT_EQ(endpoint_of("POST", "https://api.github.com/orgs/acme/actions/runners/generate-jitconfig"),
            "POST /orgs/{org}/actions/runners/generate-jitconfig");
  EXPECT_EQ(endpoint_of("GET", "https://api.github.com/repos/acme/app/actions/runners?per_page=100&page=2"),
            "GET /repos/{owner}/{repo}/actions/runners");
  EXPECT_EQ(endpoint_of("DELETE", "https://api.github.com/enterprises/big/actions/runners/123456"),
            "DELETE /enterprises/{enterprise}/actions/runners/{id}");
  EXPECT_EQ(endpoint_of("POST", "https://api.github.com/app/installations/42/access_tokens"),
            "POST /app/installations/{id}/access_tokens");
  // Names that look like ids are still names.
  EXPECT_EQ(endpoint_of("GET", "https://api.github.com/repos/acme2024/app-v2/actions/runner-groups"),
            "GET /repos/{owner}/{repo}/actions/runner-groups");
}

TEST(GithubEndpoint, GhesPrefixAndActionsServiceTenantAreLeftOut) {
  EXPECT_EQ(
      endpoint_of("POST", "https://ghes.example.com/api/v3/orgs/acme/actions/runners/registration-token"),
      "POST /orgs/{org}/actions/runners/registration-token");
  EXPECT_EQ(endpoint_of("POST",
                        "https://pipelines.actions.githubusercontent.com/aBcD1234eFgH/_apis/runtime/"
                        "runnerscalesets/7/sessions"),
            "POST /_apis/runtime/runnerscalesets/{id}/sessions");
  EXPECT_EQ(endpoint_of("DELETE",
                        "https://pipelines.actions.githubusercontent.com/t/_apis/runtime/runnerscalesets/7/"
                        "sessions/1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"),
            "DELETE /_apis/runtime/runnerscalesets/{id}/sessions/{id}");
  EXPECT_EQ(
      endpoint_of("GET", "https://broker.actions.githubusercontent.com/message?sessionId=1&status=Online"),
      "GET /message");
  EXPECT_EQ(endpoint_of("GET", "http://127.0.0.1:41234/"), "GET /");
}

TEST(GithubEndpoint, StatusClasses) {
  EXPECT_EQ(status_class(200), "2xx");
  EXPECT_EQ(status_class(201), "2xx");
  EXPECT_EQ(status_class(304), "3xx");
  EXPECT_EQ(status_class(422), "4xx");
  EXPECT_EQ(status_class(503), "5xx");
  EXPECT_EQ(status_class(0), "error");
}

}  // namespace
}  // namespace octorun::github
