#include "common/base64.hpp"

#include <gtest/gtest.h>

namespace octorun {
namespace {

// RFC 4648 section 10 test vectors.
TEST(Base64, EncodesTheRfcVectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (auto [plain, encoded] : vectors) {
    EXPECT_EQ(base64_encode(plain), encoded);
    EXPECT_EQ(base64_decode(encoded), plain);
  }
}

TEST(Base64, UrlAlphabetWithoutPaddingRoundTrips) {
  std::string bytes = "\xfb\xff\xfe binary \x00 data";
  bytes.push_back('\0');
  auto url = base64url_encode(bytes);
  EXPECT_EQ(url.find_first_of("+/="), std::string::npos);
  EXPECT_EQ(base64_decode(url), bytes);
  EXPECT_EQ(base64_encode("\xfb\xff"), "+/8=");
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
}

TEST(Base64, IgnoresLineBreaksAndRejectsGarbage) {
  EXPECT_EQ(base64_decode("Zm9v\nYmFy\r\n"), "foobar");
  EXPECT_EQ(base64_decode("Zm9v!"), std::nullopt);
  EXPECT_EQ(base64_decode("Z"), std::nullopt);
  EXPECT_EQ(base64_decode("Zg==Zg=="), std::nullopt);
  EXPECT_EQ(base64_decode("Zg==="), std::nullopt);
}

}  // namespace
}  // namespace octorun
