#include "actors/controller/controller.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/controller/job_routing.hpp"
#include "actors/controller/unrouted.hpp"
#include "actors/metrics/event_metrics.hpp"
#include "model/naming.hpp"

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

// Which sets get each job message (job_routing.hpp), from the sets and the
// Runners the controller watched.
TEST(JobRouting, EachMessageGoesToTheSetsItsRuleNames) {
  auto acme = set_for("https://github.com/acme");
  auto other = set_for("https://github.com/other");
  acme.metadata.name = "acme";
  other.metadata.name = "other";
  auto leaving = set_for("https://github.com/acme");
  leaving.metadata.name = "leaving";
  leaving.metadata.deleting = true;
  job_routes r;
  // "ci/0-leaving" sorts first: demand skips a set being deleted.
  r.sets = {{"ci/0-leaving", std::make_shared<const model::runnerset>(leaving)},
            {"ci/acme", std::make_shared<const model::runnerset>(acme)},
            {"ci/other", std::make_shared<const model::runnerset>(other)}};
  r.runner_sets = {{"seen-runner", {{"ci", "ci/acme"}}}};
  using keys = std::vector<std::string>;

  EXPECT_EQ(destinations(r, messages::job_available{job_of("acme/app", {"self-hosted", "linux"})}),
            keys{"ci/acme"});
  EXPECT_EQ(destinations(r, messages::job_assigned{job_of("other/app", {"linux"})}), keys{"ci/other"});
  EXPECT_TRUE(destinations(r, messages::job_available{job_of("acme/app", {"gpu"})}).empty())
      << "no variant takes the labels";
  EXPECT_TRUE(destinations(r, messages::job_available{job_of("nobody/app", {"linux"})}).empty());

  EXPECT_EQ(destinations(r, messages::job_started{job_of("acme/app", {}), "seen-runner", 1}), keys{"ci/acme"})
      << "a watched Runner's owner";
  auto unseen = model::runner_name("other", "", "ab12c");
  EXPECT_EQ(destinations(r, messages::job_started{job_of("acme/app", {}), unseen, 2}), keys{"ci/other"})
      << "not watched yet: the set whose runner names have its prefix, whatever the repository";
  EXPECT_EQ(destinations(r, messages::job_started{job_of("acme/app", {}),
                                                  model::runner_name("leaving", "", "x1y2z"), 5}),
            keys{"ci/0-leaving"})
      << "a set being deleted still owns its runners";
  EXPECT_TRUE(destinations(r, messages::job_started{job_of("acme/app", {}), unseen + "x", 3}).empty())
      << "a name of the right prefix but not of our length is not ours";
  EXPECT_TRUE(destinations(r, messages::job_started{job_of("acme/app", {}), "hosted-runner", 4}).empty());

  EXPECT_EQ(destinations(r, messages::job_completed{job_of("acme/app", {}), "hosted-runner", 4, "success"}),
            (keys{"ci/0-leaving", "ci/acme", "ci/other"}))
      << "every set drops a completed job from its demand";

  messages::session_message session{"ci/acme", {}, std::nullopt};
  EXPECT_EQ(destinations(r, session), keys{"ci/acme"});
  session.runner_set = "ci/gone";
  EXPECT_TRUE(destinations(r, session).empty()) << "a listener whose set is gone reaches nobody";
}

// Issue 32: routing keyed on the runner name alone, so of two namespaces
// with a set "ci" and a Runner "ci-ab12c" each, the later watched took the
// other's job starts (its Runner went Running on a job it never ran, the
// other's demand leaked). A start reaches only the namespace whose set
// serves the job's repository.
TEST(JobRouting, AStartNeverCrossesNamespaces) {
  auto team_a = set_for("https://github.com/team-a");
  auto team_b = set_for("https://github.com/team-b");
  team_a.metadata.name = team_b.metadata.name = "ci";
  job_routes r;
  r.sets = {{"a/ci", std::make_shared<const model::runnerset>(team_a)},
            {"b/ci", std::make_shared<const model::runnerset>(team_b)}};
  const auto name = model::runner_name("ci", "", "ab12c");
  r.runner_sets = {{name, {{"a", "a/ci"}, {"b", "b/ci"}}}};
  using keys = std::vector<std::string>;
  EXPECT_EQ(destinations(r, messages::job_started{job_of("team-a/app", {}), name, 1}), keys{"a/ci"});
  EXPECT_EQ(destinations(r, messages::job_started{job_of("team-b/app", {}), name, 2}), keys{"b/ci"});
  EXPECT_TRUE(destinations(r, messages::job_started{job_of("team-c/app", {}), name, 3}).empty())
      << "neither namespace's set serves it";
  // Not watched yet: the name's prefix fits both sets; the repository decides.
  r.runner_sets.clear();
  EXPECT_EQ(destinations(r, messages::job_started{job_of("team-b/app", {}), name, 4}), keys{"b/ci"});
  // Both serve it (one GitHub scope, two namespaces): neither gets it.
  auto shared = set_for("https://github.com/team-a");
  shared.metadata.name = "ci";
  r.sets["b/ci"] = std::make_shared<const model::runnerset>(shared);
  r.runner_sets = {{name, {{"a", "a/ci"}, {"b", "b/ci"}}}};
  EXPECT_TRUE(destinations(r, messages::job_started{job_of("team-a/app", {}), name, 5}).empty());
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
