// The pure decisions behind variant scale sets and the listener, without I/O.
#include "actors/runnerset/scale_sets.hpp"

#include <gtest/gtest.h>

#include "actors/listener/session_decisions.hpp"
#include "model/naming.hpp"
#include "model/parse.hpp"

namespace octorun {
namespace {

model::runnerset set_with_variants(const std::string& variants) {
  auto set = model::parse_runnerset(
      R"({"apiVersion":"octorun.io/v1alpha1","kind":"RunnerSet","metadata":{"name":"ci","namespace":"x"},)"
      R"("spec":{"scopeURL":"https://github.com/acme","credentialsSecretName":"gh","intake":"Listener",)"
      R"("runnerLabels":["linux"],"template":{"spec":{"containers":[{"name":"runner","image":"r"}]}},)"
      R"("variants":[)" +
      variants + "]}}");
  EXPECT_TRUE(set);
  return set ? *set : model::runnerset{};
}

TEST(ScaleSets, AreNamedAfterTheSetAndVariant) {
  EXPECT_EQ(runnerset::scale_set_name("ci", ""), "ci");
  EXPECT_EQ(runnerset::scale_set_name("ci", "large"), "ci-large");
}

// A scale set of the set's name another controller registered (an ARC
// install, another cluster's manager) is never taken for the set's own:
// only the id it recorded or the set's label make it the set's, and every
// scale set the set registers carries that label.
TEST(ScaleSets, OnlyTheRecordedIdOrTheSetsOwnLabelMakeAScaleSetTheSets) {
  using runnerset::registered_by_the_set, runnerset::scale_set_labels;
  const auto mark = model::registering_set_label("uid-1");
  EXPECT_EQ(scale_set_labels({"linux"}, "ci", "uid-1"), (std::vector<std::string>{"linux", "ci", mark}));
  EXPECT_EQ(scale_set_labels({"ci", "linux"}, "ci", ""), (std::vector<std::string>{"ci", "linux"}))
      << "its name once; no set label without a uid";

  EXPECT_TRUE(registered_by_the_set(7, {"ci"}, 7, "uid-1")) << "recorded before the label existed";
  EXPECT_TRUE(registered_by_the_set(7, {"ci", mark}, 0, "uid-1")) << "registered, its status not written";
  EXPECT_FALSE(registered_by_the_set(7, {"ci"}, 0, "uid-1")) << "another controller's";
  EXPECT_FALSE(registered_by_the_set(7, {"ci", model::registering_set_label("uid-2")}, 0, "uid-1"))
      << "another set's (another cluster's)";
  EXPECT_FALSE(registered_by_the_set(8, {"ci"}, 7, "uid-1")) << "not the one it recorded";
  EXPECT_FALSE(registered_by_the_set(7, {"ci", model::registering_set_label("")}, 0, ""))
      << "no uid, no record: not its own";
}

TEST(ScaleSets, TheIntakeIsParsedAndAnUnknownOneIsRefused) {
  EXPECT_EQ(set_with_variants("").spec.intake, model::intake_mode::listener);
  auto bad = model::parse_runnerset(
      R"({"metadata":{"name":"ci"},"spec":{"intake":"Polling","template":{"spec":{"containers":[]}}}})");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().front().field, "spec.intake");
}

TEST(ScaleSets, RecordedIdsComeFromTheStatusForTheDefaultAndEachVariant) {
  model::runnerset_status status;
  status.scale_set_id = 7;
  status.variants = {{"small", 8, {}, {}}, {"large", 0, {}, {}}};
  auto ids = runnerset::recorded_scale_sets(status);
  EXPECT_EQ(ids, (std::map<std::string, std::int64_t>{{"", 7}, {"small", 8}}));
}

TEST(ScaleSets, TheRecordedSessionComesFromTheStatusForTheDefaultAndEachVariant) {
  model::runnerset_status status;
  status.session_id = "s-default";
  status.variants = {{"small", 8, {}, "s-small"}, {"large", 9, {}, ""}};
  EXPECT_EQ(runnerset::recorded_session(status, ""), "s-default");
  EXPECT_EQ(runnerset::recorded_session(status, "small"), "s-small");
  EXPECT_EQ(runnerset::recorded_session(status, "large"), "");
  EXPECT_EQ(runnerset::recorded_session(status, "gone"), "");
  auto parsed = model::parse_runnerset(
      R"({"metadata":{"name":"ci"},"spec":{"template":{"spec":{"containers":[]}}},)"
      R"("status":{"scaleSetId":7,"sessionId":"s-default","variants":[{"name":"small","sessionId":"s-small"}]}})");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(runnerset::recorded_session(parsed->status, ""), "s-default") << "read back after a restart";
  EXPECT_EQ(runnerset::recorded_session(parsed->status, "small"), "s-small");
}

TEST(ScaleSets, RetiredVariantsAreThoseStillReferencedButNoLongerDeclared) {
  auto set = set_with_variants(R"({"name":"small","runnerLabels":["small"]})");
  auto current = model::effective_variants(set.spec);
  // large: removed, still has runners and a scale set; gpu: removed, only its
  // scale set is left; "": the set had no variants before; small: declared.
  auto retired = runnerset::retired_variants(current, {"small", "large", "large"},
                                             {{"", 3}, {"small", 4}, {"large", 5}, {"gpu", 6}});
  ASSERT_EQ(retired.size(), 3u);
  EXPECT_EQ(retired[0].name, "");
  EXPECT_EQ(retired[0].scale_set_id, 3);
  EXPECT_FALSE(retired[0].has_runners);
  EXPECT_EQ(retired[1].name, "gpu");
  EXPECT_EQ(retired[2].name, "large");
  EXPECT_EQ(retired[2].scale_set_id, 5);
  EXPECT_TRUE(retired[2].has_runners);
  EXPECT_TRUE(runnerset::retired_variants(current, {"small"}, {{"small", 4}}).empty());
}

TEST(Listener, AcquiresEachAvailableJobOnce) {
  github::queue_message m;
  auto job = [](std::int64_t id) {
    messages::job_info j;
    j.source = messages::job_source::listener;
    j.job_id = id;
    return j;
  };
  m.jobs = {messages::job_available{job(3)},
            messages::job_started{job(1), "r", 1},
            messages::job_available{job(4)},
            messages::job_available{job(3)},
            messages::job_completed{job(2), "r", 1, "succeeded"},
            messages::job_available{job(0)}};
  EXPECT_EQ(listener::jobs_to_acquire(m), (std::vector<std::int64_t>{3, 4}));
  EXPECT_TRUE(listener::jobs_to_acquire({}).empty());
}

}  // namespace
}  // namespace octorun
