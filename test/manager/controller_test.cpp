#include "actors/controller/controller.hpp"

#include <gtest/gtest.h>

namespace octorun::controller {
namespace {

TEST(ScopeServes, OrganisationRepositoryAndEnterpriseScopes) {
  EXPECT_TRUE(scope_serves("https://github.com/acme", "acme/app"));
  EXPECT_TRUE(scope_serves("https://github.com/Acme", "ACME/app")) << "owners compare case-insensitively";
  EXPECT_FALSE(scope_serves("https://github.com/acme", "other/app"));
  EXPECT_TRUE(scope_serves("https://github.com/acme/app", "acme/app"));
  EXPECT_FALSE(scope_serves("https://github.com/acme/app", "acme/lib"));
  EXPECT_TRUE(scope_serves("https://github.com/enterprises/big", "anyone/anything"));
  EXPECT_TRUE(scope_serves("http://127.0.0.1:8080/acme", "acme/app")) << "GHES hosts";
  EXPECT_FALSE(scope_serves("not a url", "acme/app"));
  EXPECT_FALSE(scope_serves("https://github.com/acme", "no-slash"));
}

}  // namespace
}  // namespace octorun::controller
