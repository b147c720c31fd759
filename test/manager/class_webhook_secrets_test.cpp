// The RunnerClasses' own webhook secrets (actors/class_hooks/webhook_secrets.hpp):
// which classes have a path of their own, and what a read of a class's
// Secret makes of it.
#include <gtest/gtest.h>

#include "actors/class_hooks/webhook_secrets.hpp"
#include "common/base64.hpp"
#include "common/json_parse.hpp"

namespace octorun::class_hooks {
namespace {

rapidjson::Document secret_with(const std::string& data) {
  rapidjson::Document d;
  d.Parse((R"({"kind":"Secret","metadata":{"name":"team-a-hook"},"data":)" + data + "}").c_str());
  return d;
}

const model::secret_key_ref ref{"team-a-hook", "secret"};

TEST(ClassWebhookSecret, IsTheKeysDecodedValue) {
  auto ok = read_webhook_secret(secret_with(R"({"secret":")" + base64_encode("s3cret\n") + "\"}"), ref);
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(*ok, "s3cret") << "a trailing line break (echo into a file) is not part of it";
  auto other_key = read_webhook_secret(secret_with(R"({"hmac":")" + base64_encode("x") + "\"}"),
                                       model::secret_key_ref{"team-a-hook", "hmac"});
  ASSERT_TRUE(other_key);
  EXPECT_EQ(*other_key, "x");

  auto absent = read_webhook_secret(secret_with(R"({"other":"eA=="})"), ref);
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error(), "key secret of Secret team-a-hook is absent");
  EXPECT_FALSE(read_webhook_secret(secret_with("null"), ref));
  auto empty = read_webhook_secret(secret_with(R"({"secret":")" + base64_encode("\n") + "\"}"), ref);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error(), "key secret of Secret team-a-hook is empty");
  auto garbled = read_webhook_secret(secret_with(R"({"secret":"%%%"})"), ref);
  ASSERT_FALSE(garbled);
  EXPECT_EQ(garbled.error(), "key secret of Secret team-a-hook is not valid base64");
  EXPECT_FALSE(read_webhook_secret(secret_with(R"({"secret":7})"), ref));
}

TEST(ClassWebhookSecret, OnlyClassesThatNameOneHaveAPath) {
  std::map<std::string, model::runner_class> classes;
  classes["a"].spec.webhook_secret = ref;
  classes["b"];  // the manager's own path and secret only
  auto refs = webhook_secret_refs(classes);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs.at("a"), ref);
}

// A Secret that goes, or breaks, turns the path off saying why; a failed
// read (the apiserver away for a moment) keeps a secret that worked.
TEST(ClassWebhookSecret, AfterAReadTheSecretOrWhyNot) {
  auto good = secret_with(R"({"secret":")" + base64_encode("s3cret") + "\"}");
  auto read = after_read(std::nullopt, {&good, false, ""}, ref, "platform");
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, "s3cret");

  auto gone = after_read(read, {nullptr, true, ""}, ref, "platform");
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error(), "Secret platform/team-a-hook does not exist");

  auto blip = after_read(read, {nullptr, false, "HTTP 503"}, ref, "platform");
  ASSERT_TRUE(blip) << "a blip keeps the secret that worked";
  EXPECT_EQ(*blip, "s3cret");
  auto never = after_read(std::nullopt, {nullptr, false, "forbidden"}, ref, "platform");
  ASSERT_FALSE(never);
  EXPECT_EQ(never.error(), "Secret platform/team-a-hook cannot be read: forbidden");

  auto broken = secret_with(R"({"other":"eA=="})");
  auto malformed = after_read(read, {&broken, false, ""}, ref, "platform");
  ASSERT_FALSE(malformed);
  EXPECT_EQ(malformed.error(), "key secret of Secret team-a-hook is absent (namespace platform)");
}

}  // namespace
}  // namespace octorun::class_hooks
