// The GitHub trust bundle (--github-ca-file): the system CAs plus a PEM
// bundle; anything that is not PEM certificates is refused with a reason.
#include "adapters/tls/ca_bundle.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "adapters/tls/certificates.hpp"

namespace octorun::tls {
namespace {

class CaBundle : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("octorun-ca-bundle-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  static std::string ca(const std::string& cn) {
    auto made = make_ca(cn, std::chrono::hours(24));
    EXPECT_TRUE(made) << made.error();
    return made ? made->certificate : std::string();
  }
  std::filesystem::path dir_;
};

TEST_F(CaBundle, CountsCertificates) {
  EXPECT_EQ(*count_pem_certificates(ca("one")), 1);
  EXPECT_EQ(*count_pem_certificates(ca("one") + "\n" + ca("two")), 2);
}

TEST_F(CaBundle, RefusesWhatIsNotPemCertificates) {
  EXPECT_FALSE(count_pem_certificates(""));
  EXPECT_FALSE(count_pem_certificates("just some text\n"));
  auto key_only = make_ca("k", std::chrono::hours(1))->private_key;
  EXPECT_FALSE(count_pem_certificates(key_only));
  auto broken = ca("b");
  broken.replace(broken.size() / 2, 8, "!!!!!!!!");
  auto why = count_pem_certificates(broken);
  ASSERT_FALSE(why);
  EXPECT_NE(why.error().find("certificate 1 does not parse"), std::string::npos) << why.error();
}

TEST_F(CaBundle, SystemBundleFirstThenTheExtra) {
  const auto system = ca("system");
  const auto extra = ca("ghes");
  auto bundle = trust_bundle_with(write("extra.pem", extra), write("system.pem", system));
  ASSERT_TRUE(bundle) << bundle.error();
  EXPECT_EQ(*bundle, system + extra);
  EXPECT_EQ(*count_pem_certificates(*bundle), 2);
}

TEST_F(CaBundle, NoSystemBundleLeavesTheExtra) {
  const auto extra = ca("ghes");
  auto bundle = trust_bundle_with(write("extra.pem", extra), (dir_ / "missing.pem").string());
  ASSERT_TRUE(bundle) << bundle.error();
  EXPECT_EQ(*bundle, extra);
}

TEST_F(CaBundle, ErrorsNameTheFile) {
  auto not_pem = write("notpem.txt", "hello\n");
  auto refused = trust_bundle_with(not_pem, "");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find(not_pem + " is not a PEM certificate bundle"), std::string::npos)
      << refused.error();
  auto missing = trust_bundle_with((dir_ / "nope.pem").string(), "");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("cannot read"), std::string::npos);
}

TEST_F(CaBundle, SystemBundlePathIsFoundOnThisMachine) {
  // Debian's ca-certificates (scripts/install-deps.sh) provides one.
  EXPECT_FALSE(system_ca_bundle_path().empty());
}

}  // namespace
}  // namespace octorun::tls
