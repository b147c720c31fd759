// How the Kubernetes client names its requests for the metrics
// (adapters/kube/request_metrics.hpp): as the API server's own metrics do,
// with no object name or namespace in the labels.
#include "adapters/kube/request_metrics.hpp"

#include <gtest/gtest.h>

namespace octorun::kube {
namespace {

TEST(RequestKind, VerbsAsTheApiServerNamesThem) {
  EXPECT_EQ(classify_request("GET", "/api/v1/namespaces/ci/pods/p-1"), (request_kind{"get", "pods"}));
  EXPECT_EQ(classify_request("GET", "/api/v1/namespaces/ci/pods?labelSelector=a%3Db&limit=500"),
            (request_kind{"list", "pods"}));
  EXPECT_EQ(classify_request("GET", "/api/v1/pods?watch=true&resourceVersion=12"),
            (request_kind{"watch", "pods"}));
  EXPECT_EQ(classify_request("GET", "/api/v1/namespaces/ci/pods?allowWatchBookmarks=true&watch=1"),
            (request_kind{"watch", "pods"}));
  EXPECT_EQ(classify_request("POST", "/api/v1/namespaces/ci/secrets"), (request_kind{"create", "secrets"}));
  EXPECT_EQ(classify_request("PUT", "/apis/coordination.k8s.io/v1/namespaces/ci/leases/octorun"),
            (request_kind{"update", "leases.coordination.k8s.io"}));
  EXPECT_EQ(classify_request("PATCH", "/apis/octorun.io/v1alpha1/namespaces/ci/runners/linux-abcde"),
            (request_kind{"patch", "runners.octorun.io"}));
  EXPECT_EQ(classify_request("DELETE", "/apis/octorun.io/v1alpha1/namespaces/ci/runners/linux-abcde"),
            (request_kind{"delete", "runners.octorun.io"}));
  EXPECT_EQ(classify_request("DELETE", "/api/v1/namespaces/ci/pods"),
            (request_kind{"deletecollection", "pods"}));
}

TEST(RequestKind, SubresourcesClusterScopedResourcesAndOtherPaths) {
  EXPECT_EQ(classify_request("PATCH", "/apis/octorun.io/v1alpha1/namespaces/ci/runnersets/linux/status"),
            (request_kind{"patch", "runnersets.octorun.io/status"}));
  EXPECT_EQ(classify_request("GET", "/api/v1/namespaces/ci"), (request_kind{"get", "namespaces"}));
  EXPECT_EQ(classify_request("GET", "/api/v1/namespaces"), (request_kind{"list", "namespaces"}));
  EXPECT_EQ(classify_request("PATCH",
                             "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/octorun"),
            (request_kind{"patch", "validatingwebhookconfigurations.admissionregistration.k8s.io"}));
  EXPECT_EQ(classify_request("GET", "/version"), (request_kind{"get", ""}));
  EXPECT_EQ(classify_request("GET", "/apis"), (request_kind{"get", ""}));
  EXPECT_EQ(classify_request("GET", "/api/v1"), (request_kind{"get", ""}));
}

}  // namespace
}  // namespace octorun::kube
