#include "adapters/logging/logging.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <spdlog/spdlog.h>

namespace octorun::logging {
namespace {

TEST(Logging, JsonLinesStayValidWhateverTheMessage) {
  ASSERT_TRUE(setup({format::json, "debug", "octorun"}));
  const std::string tricky = "quote \" backslash \\ newline \n tab \t bell \x07 done";
  testing::internal::CaptureStderr();
  spdlog::info("runner {} said: {}", "ci/linux-abc", tricky);
  spdlog::debug("debug is on");
  auto out = testing::internal::GetCapturedStderr();

  auto nl = out.find('\n');
  ASSERT_NE(nl, std::string::npos) << out;
  rapidjson::Document d;
  d.Parse(out.substr(0, nl).c_str());
  ASSERT_FALSE(d.HasParseError()) << out;
  EXPECT_STREQ(d["level"].GetString(), "info");
  EXPECT_STREQ(d["logger"].GetString(), "octorun");
  EXPECT_EQ(std::string(d["msg"].GetString()), "runner ci/linux-abc said: " + tricky);
  EXPECT_NE(out.find("debug is on"), std::string::npos);
}

TEST(Logging, LevelFiltersAndUnknownLevelsAreRejected) {
  ASSERT_TRUE(setup({format::text, "warn", "octorun"}));
  testing::internal::CaptureStderr();
  spdlog::info("hidden");
  spdlog::warn("shown");
  auto out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.find("hidden"), std::string::npos);
  EXPECT_NE(out.find("shown"), std::string::npos);

  auto bad = setup({format::json, "verbose", "octorun"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("verbose"), std::string::npos);
  EXPECT_TRUE(setup({format::json, "off", "octorun"}));
}

TEST(Logging, EscapesControlCharacters) { EXPECT_EQ(json_escape("a\"b\\c\x01"), "a\\\"b\\\\c\\u0001"); }

}  // namespace
}  // namespace octorun::logging
