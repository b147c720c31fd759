// The RunnerSet's Events: one per transition, none per reconcile
// (actors/runnerset/set_events.hpp).
#include "actors/runnerset/set_events.hpp"

#include <gtest/gtest.h>

namespace octorun::runnerset {
namespace {

using credentials_state = set_summary::credentials_state;

model::runnerset fresh_set() {
  model::runnerset s;
  s.metadata.name = "linux";
  s.metadata.namespace_ = "ci";
  s.spec.credentials_secret_name = "gh";
  s.spec.min_runners = 0;
  s.spec.max_runners = 10;
  return s;
}

// A plan that scaled: `desired` for the default variant, `outdated` of them old.
set_plan scaled(std::int32_t desired, std::int32_t outdated = 0) {
  set_plan p;
  p.desired = {{"", desired}};
  counts c;
  c.desired = desired;
  c.outdated = outdated;
  p.counts = {{"", c}};
  return p;
}

// A set whose credentials are loaded, and what was known of it before.
set_observation loaded() {
  set_observation o;
  o.credentials_loaded = true;
  return o;
}
set_summary ready() {
  set_summary s;
  s.credentials = credentials_state::ready;
  return s;
}

std::vector<std::string> reasons(const std::vector<set_event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.reason);
  return out;
}

TEST(RunnerSetEvents, AMissingSecretIsOneWarningNamingIt) {
  auto set = fresh_set();
  set_observation o;
  o.credentials_error = R"(secrets "gh" not found)";
  auto before = summary_from_status(set);
  auto after = summarize(before, o, set_plan{});
  auto events = set_events(before, after, set.spec.credentials_secret_name);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].warning);
  EXPECT_EQ(events[0].reason, "CredentialsInvalid");
  EXPECT_NE(events[0].note.find("Secret gh"), std::string::npos) << events[0].note;
  EXPECT_NE(events[0].note.find(R"(secrets "gh" not found)"), std::string::npos) << events[0].note;
  // Every later reconcile of the stuck set: nothing new.
  for (int i = 0; i < 5; ++i) {
    auto again = summarize(after, o, set_plan{});
    EXPECT_TRUE(set_events(after, again, "gh").empty());
    after = again;
  }
  // A different problem is a new Warning; the fix is a Normal Event.
  o.credentials_error = "key github_token: empty";
  auto changed = summarize(after, o, set_plan{});
  EXPECT_EQ(reasons(set_events(after, changed, "gh")), std::vector<std::string>{"CredentialsInvalid"});
  o.credentials_error.clear();
  o.credentials_loaded = true;
  auto fixed = summarize(changed, o, scaled(0));
  auto events_fixed = set_events(changed, fixed, "gh");
  EXPECT_EQ(reasons(events_fixed), std::vector<std::string>{"CredentialsLoaded"});
  EXPECT_FALSE(events_fixed[0].warning);
}

TEST(RunnerSetEvents, ReadingTheSecretIsNoTransition) {
  set_observation o;  // not loaded, no error yet: the read is in flight
  auto before = summary_from_status(fresh_set());
  EXPECT_TRUE(set_events(before, summarize(before, o, set_plan{}), "gh").empty());
}

TEST(RunnerSetEvents, ARestartRepeatsNothingTheStatusSays) {
  auto set = fresh_set();
  set.status.conditions.push_back(
      {"CredentialsReady", "False", "Invalid", R"(secrets "gh" not found)", "", 1});
  set_observation o;
  o.credentials_error = R"(secrets "gh" not found)";
  auto before = summary_from_status(set);
  EXPECT_TRUE(set_events(before, summarize(before, o, set_plan{}), "gh").empty());

  set.status.conditions[0] = {"CredentialsReady", "True", "Loaded", "", "", 1};
  set.status.counts.desired_replicas = 4;
  set.status.counts.outdated_runners = 1;
  o.credentials_error.clear();
  o.credentials_loaded = true;
  before = summary_from_status(set);
  EXPECT_TRUE(set_events(before, summarize(before, o, scaled(4, 1)), "gh").empty());
}

TEST(RunnerSetEvents, ScaleDecisionsThatChange) {
  auto o = loaded();
  auto before = ready();
  auto up = summarize(before, o, scaled(3));
  auto events = set_events(before, up, "gh");
  ASSERT_EQ(reasons(events), std::vector<std::string>{"ScaledUp"});
  EXPECT_EQ(events[0].note, "Scaled up from 0 to 3 runners");
  EXPECT_TRUE(set_events(up, summarize(up, o, scaled(3)), "gh").empty()) << "the same decision again";
  auto down = summarize(up, o, scaled(1));
  EXPECT_EQ(set_events(up, down, "gh")[0].note, "Scaled down from 3 to 1 runner");
  // Credentials lost: nothing is decided, so nothing about scale is said.
  o.credentials_loaded = false;
  o.credentials_error = "boom";
  auto lost = summarize(down, o, set_plan{});
  EXPECT_EQ(lost.desired, down.desired);
  EXPECT_EQ(reasons(set_events(down, lost, "gh")), std::vector<std::string>{"CredentialsInvalid"});
}

TEST(RunnerSetEvents, VariantsAreNamed) {
  auto o = loaded();
  auto before = ready();
  set_plan p;
  p.desired = {{"gpu", 2}, {"cpu", 0}};
  p.counts = {{"gpu", counts{}}, {"cpu", counts{}}};
  auto events = set_events(before, summarize(before, o, p), "gh");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].note, "Scaled up from 0 to 2 runners (variant gpu)");
}

TEST(RunnerSetEvents, ScaleSetRegistrationAndItsFailures) {
  auto o = loaded();
  auto before = ready();
  o.scale_sets[""].failures = 1;
  o.scale_sets[""].error = "creating scale set linux: 403 Forbidden";
  auto failing = summarize(before, o, set_plan{});
  auto events = set_events(before, failing, "gh");
  ASSERT_EQ(reasons(events), std::vector<std::string>{"RegistrationFailed"});
  EXPECT_TRUE(events[0].warning);
  EXPECT_NE(events[0].note.find("403 Forbidden"), std::string::npos);
  o.scale_sets[""].failures = 2;  // the retry fails the same way: no new Event
  auto again = summarize(failing, o, set_plan{});
  EXPECT_TRUE(set_events(failing, again, "gh").empty());
  o.scale_sets[""].error.clear();
  o.scale_sets[""].id = 42;
  auto registered = summarize(again, o, set_plan{});
  events = set_events(again, registered, "gh");
  ASSERT_EQ(reasons(events), std::vector<std::string>{"ScaleSetRegistered"});
  EXPECT_NE(events[0].note.find("42"), std::string::npos);
  // After a restart the scale set is found again under the same id: nothing new.
  auto set = fresh_set();
  set.status.scale_set_id = 42;
  auto restarted = summary_from_status(set);
  restarted.credentials = credentials_state::ready;
  o.scale_sets[""].id = 0;  // not registered this run yet
  auto waiting = summarize(restarted, o, set_plan{});
  EXPECT_TRUE(set_events(restarted, waiting, "gh").empty());
  o.scale_sets[""].id = 42;
  EXPECT_TRUE(set_events(waiting, summarize(waiting, o, set_plan{}), "gh").empty());
}

TEST(RunnerSetEvents, ARunnerRegistrationGitHubRefusesIsOneWarningUntilOneSucceeds) {
  auto o = loaded();
  auto before = ready();
  o.runner_registration_error = "403 Forbidden: Resource not accessible by integration";
  auto failing = summarize(before, o, set_plan{});
  auto events = set_events(before, failing, "gh");
  ASSERT_EQ(reasons(events), std::vector<std::string>{"RunnerRegistrationFailed"});
  EXPECT_TRUE(events[0].warning);
  EXPECT_NE(events[0].note.find("403 Forbidden"), std::string::npos) << events[0].note;
  EXPECT_TRUE(set_events(failing, summarize(failing, o, set_plan{}), "gh").empty()) << "the same refusal";
  o.runner_registration_error.clear();  // one succeeded
  auto working = summarize(failing, o, set_plan{});
  EXPECT_TRUE(set_events(failing, working, "gh").empty());
  o.runner_registration_error = "403 Forbidden: Resource not accessible by integration";
  EXPECT_EQ(reasons(set_events(working, summarize(working, o, set_plan{}), "gh")),
            std::vector<std::string>{"RunnerRegistrationFailed"});
}

TEST(RunnerSetEvents, ARetiredVariantDrainsThenIsDrained) {
  auto o = loaded();
  auto before = ready();
  before.desired = {{"cpu", 1}, {"gpu", 1}};
  set_plan p;
  p.desired = {{"cpu", 1}};
  counts left;
  left.replicas = 1;
  p.counts = {{"cpu", counts{}}, {"gpu", left}};
  auto draining = summarize(before, o, p);
  auto events = set_events(before, draining, "gh");
  ASSERT_EQ(reasons(events), std::vector<std::string>{"DrainingVariant"});
  EXPECT_NE(events[0].note.find("gpu"), std::string::npos);
  p.counts = {{"cpu", counts{}}};
  auto drained = summarize(draining, o, p);
  EXPECT_EQ(reasons(set_events(draining, drained, "gh")), std::vector<std::string>{"VariantDrained"});
}

TEST(RunnerSetEvents, ATemplateRolloutStartsAndCompletes) {
  auto o = loaded();
  auto before = ready();
  before.desired = {{"", 3}};
  before.outdated = {{"", 0}};
  auto started = summarize(before, o, scaled(3, 3));
  auto events = set_events(before, started, "gh");
  ASSERT_EQ(reasons(events), std::vector<std::string>{"RolloutStarted"});
  EXPECT_EQ(events[0].note.substr(0, 9), "3 runners");
  auto progressing = summarize(started, o, scaled(3, 1));
  EXPECT_TRUE(set_events(started, progressing, "gh").empty()) << "fewer outdated is no new Event";
  auto done = summarize(progressing, o, scaled(3, 0));
  EXPECT_EQ(reasons(set_events(progressing, done, "gh")), std::vector<std::string>{"RolloutComplete"});
}

}  // namespace
}  // namespace octorun::runnerset
