// The credentials Secret "gh" (a PAT) the RunnerSet actor tests' fake
// apiservers answer with, as the apiserver returns it.
#pragma once

#include <string>

#include "adapters/kube/protocol.hpp"
#include "common/base64.hpp"

namespace octorun::test {

inline kube::object pat_credentials_secret(const std::string& token) {
  return *kube::parse_object(R"({"kind":"Secret","metadata":{"name":"gh","resourceVersion":"3"},)"
                             R"("data":{"github_token":")" +
                             base64_encode(token) + R"("}})");
}

}  // namespace octorun::test
