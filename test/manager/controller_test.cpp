#include "actors/controller/controller.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/controller/unrouted.hpp"
#include "actors/metrics/event_metrics.hpp"

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

model::runnerset set_for(const std::string& scope) {
  model::runnerset s;
  s.metadata.name = "linux";
  s.spec.scope_url = scope;
  s.spec.runner_labels = {"linux"};
  return s;
}

messages::job_info job_of(const std::string& repository, std::vector<std::string> labels) {
  messages::job_info j;
  j.job_id = 7;
  j.repository = repository;
  j.labels = std::move(labels);
  return j;
}

// A queued job no RunnerSet takes is bad input; the reason says which kind.
TEST(Unrouted, SaysWhetherTheRepositoryOrTheLabelsFoundNoSet) {
  auto linux_set = set_for("https://github.com/acme");
  std::map<std::string, std::shared_ptr<const model::runnerset>> sets{
      {"ci/linux", std::make_shared<const model::runnerset>(linux_set)}};
  EXPECT_EQ(why_unrouted(sets, job_of("other/app", {"self-hosted"})), unrouted::unserved_repository);
  EXPECT_EQ(why_unrouted(sets, job_of("acme/app", {"self-hosted", "gpu"})), unrouted::no_matching_variant);
  EXPECT_STREQ(reason_label(unrouted::unserved_repository), "unserved_repository");
  EXPECT_NE(describe(unrouted::no_matching_variant, job_of("acme/app", {"self-hosted", "gpu"})).find("gpu"),
            std::string::npos);
  linux_set.metadata.deleting = true;
  sets["ci/linux"] = std::make_shared<const model::runnerset>(linux_set);
  EXPECT_EQ(why_unrouted(sets, job_of("acme/app", {"self-hosted"})), unrouted::unserved_repository)
      << "a set being deleted serves nothing";
  EXPECT_EQ(why_unrouted({}, job_of("acme/app", {})), unrouted::unserved_repository);
}

// Every rejected input is counted; each distinct one is logged once.
TEST(RejectedInput, CountedEveryTimeLoggedOnce) {
  EXPECT_TRUE(metrics::reject_input("webhook", "unserved_repository", "test/once"));
  EXPECT_FALSE(metrics::reject_input("webhook", "unserved_repository", "test/once"));
  EXPECT_TRUE(metrics::reject_input("webhook", "unserved_repository", "test/twice"));
  double count = -1;
  for (const auto& f : metrics::event_registry().Collect())
    if (f.name == "octorun_rejected_input_total")
      for (const auto& m : f.metric)
        for (const auto& l : m.label)
          if (l.name == "reason" && l.value == "unserved_repository") count = m.counter.value;
  EXPECT_EQ(count, 3);
}

}  // namespace
}  // namespace octorun::controller
