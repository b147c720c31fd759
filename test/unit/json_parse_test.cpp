// json::parse, the entry point for every JSON from outside: deep nesting and
// over-size text are refused with a message, never a crash (this test runs
// in the sanitizer build too).
#include "common/json_parse.hpp"

#include <gtest/gtest.h>

#include <string>

#include "common/json.hpp"

namespace octorun::json {
namespace {

constexpr source test_source{"a test body", 1u << 20};

std::string nested_arrays(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string nested_objects(std::size_t depth) {
  std::string out;
  for (std::size_t i = 0; i < depth; ++i) out += "{\"a\":";
  out += "1";
  out += std::string(depth, '}');
  return out;
}

TEST(JsonParse, ReadsADocument) {
  auto d = parse(R"({"name":"x","items":[1,2,{"deep":[true]}]})", test_source);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(str(*d, "name"), "x");
  EXPECT_EQ(canonical(*d), R"({"items":[1,2,{"deep":[true]}],"name":"x"})");
}

TEST(JsonParse, SkipsAByteOrderMark) {
  auto d = parse("\xEF\xBB\xBF{\"a\":1}", test_source);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(i64(*d, "a"), 1);
}

TEST(JsonParse, KeepsNulBytesInStrings) {
  auto d = parse(std::string_view("{\"a\":\"x\\u0000y\"}"), test_source);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(str(*d, "a"), std::string("x\0y", 3));
}

TEST(JsonParse, TakesNestingUpToTheLimit) {
  EXPECT_TRUE(parse(nested_arrays(max_depth), test_source));
  EXPECT_TRUE(parse(nested_objects(max_depth), test_source));
}

TEST(JsonParse, RefusesNestingPastTheLimit) {
  for (const auto& text : {nested_arrays(max_depth + 1), nested_objects(max_depth + 1)}) {
    auto d = parse(text, test_source);
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().rfind("JSON nested deeper than 128 levels", 0), 0u) << d.error();
  }
}

// About a megabyte of '[' overflowed a worker's stack with the recursive parser.
TEST(JsonParse, RefusesAHundredThousandLevelsWithoutRecursing) {
  constexpr std::size_t depth = 100'000;
  for (const auto& text : {std::string(depth, '['), nested_arrays(depth), nested_objects(depth)}) {
    auto d = parse(text, test_source);
    ASSERT_FALSE(d);
    EXPECT_NE(d.error().find("nested deeper than"), std::string::npos) << d.error();
  }
}

TEST(JsonParse, RefusesTextOverItsSourcesLimit) {
  constexpr source small{"a small body", 16};
  auto d = parse(R"({"a":"0123456789"})", small);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error(), "a small body of 18 bytes is over its 16-byte limit");
  EXPECT_TRUE(parse(R"({"a":"0123456"})", small));
}

TEST(JsonParse, SaysWhereInvalidJsonFails) {
  auto d = parse(R"({"a":1,})", test_source);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().rfind("invalid JSON at offset 7: ", 0), 0u) << d.error();
  auto trailing = parse("{} x", test_source);
  ASSERT_FALSE(trailing);
  EXPECT_NE(trailing.error().find("invalid JSON at offset 3"), std::string::npos) << trailing.error();
  EXPECT_FALSE(parse("", test_source));
}

TEST(JsonParse, ParseIntoLeavesTheDocumentNullOnAnError) {
  rapidjson::Document d;
  ASSERT_TRUE(parse_into(d, R"({"a":1})", test_source));
  EXPECT_TRUE(d.IsObject());
  EXPECT_FALSE(parse_into(d, nested_arrays(1000), test_source));
  EXPECT_TRUE(d.IsNull());
}

}  // namespace
}  // namespace octorun::json
