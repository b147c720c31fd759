#include "adapters/admission/identity.hpp"

#include "common/json.hpp"

namespace octorun::admission {

expected<std::string, std::string> own_username(kube::client& client) {
  const kube::resource reviews{"authentication.k8s.io", "v1", "selfsubjectreviews", false};
  auto review =
      client.create(reviews, "", R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})");
  if (!review) return unexpected<std::string>{"SelfSubjectReview: " + review.error().message};
  const auto* status = review->member("status");
  const auto* user = status != nullptr ? json::member(*status, "userInfo") : nullptr;
  auto name = user != nullptr ? json::str(*user, "username") : std::string();
  if (name.empty())
    return unexpected<std::string>{std::string("SelfSubjectReview: no status.userInfo.username")};
  return name;
}

}  // namespace octorun::admission
