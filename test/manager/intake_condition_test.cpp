// The IntakeReady condition: only a Webhook set under a manager without the
// webhook intake gets one (False), so every other set's status is unchanged.
#include "actors/runnerset/intake_condition.hpp"

#include <gtest/gtest.h>

namespace octorun::runnerset {
namespace {

using model::intake_mode;

TEST(IntakeCondition, WebhookSetWithoutTheIntakeIsToldSo) {
  auto c = intake_condition(intake_mode::webhook, false);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->type, "IntakeReady");
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "WebhookIntakeDisabled");
  EXPECT_NE(c->message.find("--webhook-intake=false"), std::string::npos) << c->message;
}

TEST(IntakeCondition, NoConditionWhenTheIntakeServesTheSet) {
  EXPECT_FALSE(intake_condition(intake_mode::webhook, true));
  EXPECT_FALSE(intake_condition(intake_mode::listener, true));
  EXPECT_FALSE(intake_condition(intake_mode::listener, false));
}

// Issue 32: a Listener set whose scale-set name an older set in the same
// scope holds says which name, and who holds it; the condition goes with it.
TEST(IntakeCondition, AListenerSetSaysWhichScaleSetNameAnOlderSetHolds) {
  std::map<std::string, messages::scale_set_taken> taken{{"", {"linux", "team-a/linux"}}};
  auto c = intake_condition(intake_mode::listener, true, taken);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->type, "IntakeReady");
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "ScaleSetNameTaken");
  EXPECT_NE(c->message.find("scale set linux is held by RunnerSet team-a/linux"), std::string::npos)
      << c->message;
  EXPECT_FALSE(intake_condition(intake_mode::listener, true, {}));
}

TEST(IntakeCondition, WrittenAsTheOtherConditions) {
  rapidjson::Document d;
  auto v = condition_json(*intake_condition(intake_mode::webhook, false), d.GetAllocator());
  EXPECT_STREQ(v["type"].GetString(), "IntakeReady");
  EXPECT_STREQ(v["status"].GetString(), "False");
  EXPECT_STREQ(v["reason"].GetString(), "WebhookIntakeDisabled");
  EXPECT_TRUE(v["message"].IsString());
  EXPECT_EQ(v.MemberCount(), 4u);
}

}  // namespace
}  // namespace octorun::runnerset
