// Which GitHub runners are a RunnerSet's own where only a name points at
// one (issue 32): the label the set registers every REST runner with, and
// the verdict on a runner a lookup by name finds.
#include "actors/runnerset/set_registrations.hpp"

#include <gtest/gtest.h>

#include "model/naming.hpp"

namespace octorun::runnerset {
namespace {

using strings = std::vector<std::string>;

// From the uid, not the name: two sets "linux" in two namespaces, or one
// deleted and made again, never share a label. Lowercase hex after a fixed
// prefix, well within GitHub's label rules.
TEST(RegisteringSetLabel, IsTheSetsUidDigestUnderAReservedPrefix) {
  const auto a = model::registering_set_label("6f1c1d2e-0a4b-4c1e-9d3f-0123456789ab");
  const auto b = model::registering_set_label("6f1c1d2e-0a4b-4c1e-9d3f-0123456789ac");
  EXPECT_EQ(a, model::registering_set_label("6f1c1d2e-0a4b-4c1e-9d3f-0123456789ab")) << "stable";
  EXPECT_NE(a, b);
  ASSERT_EQ(a.size(), std::string("octorun-set-").size() + 16);
  EXPECT_TRUE(a.starts_with("octorun-set-")) << a;
  for (char c : a.substr(12)) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << a;
  EXPECT_TRUE(model::is_registering_set_label(a));
  EXPECT_TRUE(model::is_registering_set_label("OCTORUN-SET-abc"))
      << "GitHub compares labels case-insensitively";
  EXPECT_FALSE(model::is_registering_set_label("octorun-se"));
  EXPECT_FALSE(model::is_registering_set_label("linux"));
}

// A job's runs-on still matches: the Runner's labels, in their order, then
// the set's, once.
TEST(LabelsToRegister, AddTheSetsLabelOnceAfterTheRunnersOwn) {
  EXPECT_EQ(labels_to_register({"self-hosted", "linux"}, "octorun-set-1"),
            (strings{"self-hosted", "linux", "octorun-set-1"}));
  EXPECT_EQ(labels_to_register({"linux", "OCTORUN-SET-1"}, "octorun-set-1"),
            (strings{"linux", "OCTORUN-SET-1"}));
  EXPECT_EQ(labels_to_register({"linux"}, ""), strings{"linux"}) << "no set read: nothing to add";
}

TEST(CarriesLabel, AsGitHubComparesLabels) {
  EXPECT_TRUE(carries_label({"linux", "octorun-set-ab"}, "octorun-set-ab"));
  EXPECT_TRUE(carries_label({"Octorun-Set-AB"}, "octorun-set-ab"));
  EXPECT_FALSE(carries_label({"octorun-set-abc"}, "octorun-set-ab"));
  EXPECT_FALSE(carries_label({""}, "")) << "an empty label is carried by none";
}

// Webhook intake: a REST runner found under the Runner's name is the set's
// only with the set's label. Another namespace's set of the same name
// registers its own label; a runner registered outside Octorun, or by a
// manager before runners carried the label (an upgrade), carries none.
TEST(FoundRunner, UnderTheWebhookIntakeOnlyARunnerWithTheSetsLabelIsTheSets) {
  const std::string ours = model::registering_set_label("uid-team-b");
  const std::string theirs = model::registering_set_label("uid-team-a");
  EXPECT_EQ(judge_found_runner(false, 0, 0, {"linux", ours}, ours), found_runner_verdict::the_sets);
  EXPECT_EQ(judge_found_runner(false, 0, 0, {"linux", theirs}, ours),
            found_runner_verdict::without_the_sets_label);
  EXPECT_EQ(judge_found_runner(false, 0, 0, {"linux"}, ours), found_runner_verdict::without_the_sets_label)
      << "registered outside Octorun, or before the label (an upgrade)";
  EXPECT_EQ(judge_found_runner(false, 0, 0, {"linux", ours}, ""),
            found_runner_verdict::without_the_sets_label)
      << "a set not read yet shows nothing is its own";
  EXPECT_NE(std::string(found_runner_left_because(found_runner_verdict::without_the_sets_label)), "");
}

// Listener intake: the scale set says whose a runner is; labels do not count.
TEST(FoundRunner, UnderTheListenerIntakeTheScaleSetSaysWhoseItIs) {
  EXPECT_EQ(judge_found_runner(true, 9, 9, {}, "octorun-set-1"), found_runner_verdict::the_sets);
  EXPECT_EQ(judge_found_runner(true, 9, 8, {"octorun-set-1"}, "octorun-set-1"),
            found_runner_verdict::in_another_scale_set);
  EXPECT_EQ(judge_found_runner(true, 0, 8, {}, "octorun-set-1"), found_runner_verdict::the_sets)
      << "the variant's scale set not known: kept, as before";
}

}  // namespace
}  // namespace octorun::runnerset
