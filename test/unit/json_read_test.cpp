// The untrusted-JSON readers of common/json.hpp.
#include <gtest/gtest.h>

#include "common/json.hpp"

namespace octorun::json {
namespace {

rapidjson::Document parse(const char* text) {
  rapidjson::Document d;
  d.Parse(text);
  return d;
}

TEST(JsonRead, IntegersAsSignedUnsignedOrFloat) {
  auto d = parse(R"({"a":-5,"b":9000000000,"c":3.9,"d":-2.5e3,"e":"7","f":null})");
  EXPECT_EQ(i64(d, "a"), -5);
  EXPECT_EQ(i64(d, "b"), 9000000000);
  EXPECT_EQ(i64(d, "c"), 3);
  EXPECT_EQ(i64(d, "d"), -2500);
  EXPECT_EQ(i64(d, "e", 11), 11);
  EXPECT_EQ(i64(d, "f", 12), 12);
  EXPECT_EQ(i64(d, "missing", 13), 13);
}

// Regression (workflow_job_fuzz, scaleset_message_fuzz): a number beyond the
// int64 range was converted regardless, which is undefined behaviour for a
// double (UBSan: "1.21845e+21 is outside the range of representable values").
TEST(JsonRead, NumbersOutsideTheInt64RangeReadAsTheFallback) {
  auto d = parse(R"({"big":1.21845e+21,"neg":-1e300,"huge":111111111111111111111111111111111,)"
                 R"("u":18446744073709551615,"max":9223372036854775807,"min":-9223372036854775808,)"
                 R"("edge":9223372036854775808.0,"low":-9223372036854775808.0})");
  EXPECT_EQ(i64(d, "big", 42), 42);
  EXPECT_EQ(i64(d, "neg", 42), 42);
  EXPECT_EQ(i64(d, "huge", 42), 42);
  EXPECT_EQ(i64(d, "u", 42), 42);
  EXPECT_EQ(i64(d, "edge", 42), 42);
  EXPECT_EQ(i64(d, "max"), INT64_MAX);
  EXPECT_EQ(i64(d, "min"), INT64_MIN);
  EXPECT_EQ(i64(d, "low"), INT64_MIN);
}

}  // namespace
}  // namespace octorun::json
