// files::write_whole: what readers of the manager's endpoints file and its
// admission keys may rely on.
#include "adapters/files/whole_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace octorun::files {
namespace {

namespace fs = std::filesystem;

struct scratch_dir {
  fs::path path;
  scratch_dir() {
    std::string t = (fs::temp_directory_path() / "whole-file-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, ec);
    fs::remove_all(path, ec);
  }
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

TEST(WriteWhole, ReplacesTheFileWithAllOfTheNewContentAndLeavesNoPartial) {
  scratch_dir d;
  const auto file = d.path / "endpoints.json";
  ASSERT_TRUE(write_whole(file, "old\n"));
  const std::string big(1 << 20, 'x');
  ASSERT_TRUE(write_whole(file, big));
  EXPECT_EQ(read(file), big);
  EXPECT_EQ(mode_of(file), 0644u);
  EXPECT_FALSE(fs::exists(d.path / "endpoints.json.partial"));
}

TEST(WriteWhole, APrivateFileIsTheOwnersAloneFromItsFirstByte) {
  scratch_dir d;
  const auto key = d.path / "tls.key";
  // A partial file an earlier run left readable by everyone: the new one
  // is not created afresh, so its mode must be set, not inherited.
  std::ofstream(d.path / "tls.key.partial") << "stale";
  fs::permissions(d.path / "tls.key.partial", fs::perms::all);
  ASSERT_TRUE(write_whole(key, "-----BEGIN PRIVATE KEY-----\n", 0600));
  EXPECT_EQ(mode_of(key), 0600u);
  EXPECT_EQ(read(key), "-----BEGIN PRIVATE KEY-----\n");
}

TEST(WriteWhole, AFileThatCannotBeWrittenNamesItselfAndWhyAndKeepsTheOldOne) {
  if (::geteuid() == 0) {
    // root writes in a directory without write permission: make the
    // target a directory instead, which no one may replace with a file.
    scratch_dir d;
    fs::create_directory(d.path / "endpoints.json");
    auto r = write_whole(d.path / "endpoints.json", "{}\n");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("cannot replace " + (d.path / "endpoints.json").string() + ": "),
              std::string::npos)
        << r.error();
    EXPECT_TRUE(fs::is_directory(d.path / "endpoints.json"));
    EXPECT_FALSE(fs::exists(d.path / "endpoints.json.partial"));
    return;
  }
  scratch_dir d;
  ASSERT_TRUE(write_whole(d.path / "endpoints.json", "old\n"));
  fs::permissions(d.path, fs::perms::owner_read | fs::perms::owner_exec);
  auto r = write_whole(d.path / "endpoints.json", "new\n");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("cannot write " + (d.path / "endpoints.json.partial").string() + ": "),
            std::string::npos)
      << r.error();
  EXPECT_EQ(read(d.path / "endpoints.json"), "old\n");
}

}  // namespace
}  // namespace octorun::files
