// Who the manager is to the apiserver: the user name its requests carry
// (request.userInfo.username in an AdmissionReview), e.g.
// system:serviceaccount:octorun-system:octorun. Asked of the apiserver with
// a SelfSubjectReview (authentication.k8s.io/v1), which every
// authenticated user may create, in cluster or from a kubeconfig.
#pragma once

#include <string>

#include "adapters/kube/client.hpp"
#include "common/expected.hpp"

namespace octorun::admission {

expected<std::string, std::string> own_username(kube::client& client);

}  // namespace octorun::admission
