// The one RFC 3339 parser and formatter.
#include "common/rfc3339.hpp"

#include <gtest/gtest.h>

namespace octorun {
namespace {

TEST(Rfc3339, ParsesAndFormats) {
  EXPECT_EQ(parse_rfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_rfc3339("2026-11-30T01:02:03Z"), 1796000523);
  EXPECT_EQ(parse_rfc3339("2026-11-30T01:02:03.123Z"), 1796000523);
  EXPECT_EQ(parse_rfc3339("2026-11-30T02:02:03+01:00"), 1796000523);
  EXPECT_EQ(parse_rfc3339("2026-11-30T00:02:03-01:00"), 1796000523);
  EXPECT_EQ(format_rfc3339(1796000523), "2026-11-30T01:02:03Z");
  EXPECT_EQ(parse_rfc3339(format_rfc3339(1796000523)), 1796000523);
  EXPECT_FALSE(parse_rfc3339(""));
  EXPECT_FALSE(parse_rfc3339("yesterday"));
  EXPECT_FALSE(parse_rfc3339("2026-13-30T01:02:03Z"));
  EXPECT_FALSE(parse_rfc3339("2026-11-30T01:02:03 in the morning"));
}

TEST(Rfc3339, MicroTime) {
  auto t = std::chrono::system_clock::time_point(std::chrono::microseconds(1772359200123456LL));
  EXPECT_EQ(format_rfc3339_micros(t), "2026-03-01T10:00:00.123456Z");
  EXPECT_EQ(parse_rfc3339(format_rfc3339_micros(t)), 1772359200);
}

}  // namespace
}  // namespace octorun
