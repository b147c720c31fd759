// common/strings.hpp: text from outside made fit for an Event or a log line;
// names compared as GitHub compares them.
#include "common/strings.hpp"

#include <gtest/gtest.h>

namespace octorun {
namespace {

TEST(PrintableExcerpt, TurnsControlCharactersIntoSpacesAndBadBytesIntoQuestionMarks) {
  EXPECT_EQ(printable_excerpt("a\nb\tc\x1b[0m\x7f", 100), "a b c [0m ");
  EXPECT_EQ(printable_excerpt(std::string_view("x\0y", 3), 100), "x y");
  EXPECT_EQ(printable_excerpt("caf\xC3\xA9 \xC2\x85 \xE2\x82\xAC", 100),
            "caf\xC3\xA9   \xE2\x82\xAC");                          // é, NEL, €
  EXPECT_EQ(printable_excerpt("\xFF\xC3 \xE2\x82", 100), "?? ??");  // not UTF-8, cut sequences
}

TEST(PrintableExcerpt, CutsAtACharacterBoundaryAndMarksTheCut) {
  EXPECT_EQ(printable_excerpt("abcdef", 6), "abcdef");
  EXPECT_EQ(printable_excerpt("abcdefg", 6), "abc...");
  EXPECT_EQ(printable_excerpt("ab\xE2\x82\xAC\xE2\x82\xAC", 7), "ab...");  // never half a €
  EXPECT_EQ(printable_excerpt(std::string(1 << 20, 'x'), 256).size(), 256u);
}

// GitHub compares runner names and labels without regard to ASCII case.
TEST(AsciiIequals, IgnoresAsciiCaseOnly) {
  EXPECT_TRUE(ascii_iequals("Octorun-Set-AB", "octorun-set-ab"));
  EXPECT_TRUE(ascii_iequals("", ""));
  EXPECT_FALSE(ascii_iequals("linux", "linux2"));
  EXPECT_FALSE(ascii_iequals("\xc3\x89", "\xc3\xa9")) << "no Unicode case folding";
}

}  // namespace
}  // namespace octorun
