// CAF's settings as the manager reads them: its defaults where nothing chose,
// the operator's choice (command line or INI file) where something did.
#include "cmd/octorun/caf_settings.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <caf/atom.hpp>
#include <caf/settings.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace octorun::manager {
namespace {

std::string policy(const caf::actor_system_config& cfg) {
  return caf::to_string(caf::get_or(cfg.content, "scheduler.policy", caf::atom("unset")));
}

TEST(CafSettings, WorkSharingUnlessTheOperatorChose) {
  caf::actor_system_config cfg;
  ASSERT_EQ(configure_caf(cfg, {"--scheduler.max-threads=2"}), std::nullopt);
  EXPECT_EQ(policy(cfg), "sharing");
  EXPECT_EQ(caf::get_or(cfg.content, "scheduler.max-threads", size_t{0}), 2u);
}

TEST(CafSettings, TheCommandLineChoosesThePolicy) {
  caf::actor_system_config cfg;
  ASSERT_EQ(configure_caf(cfg, {"--scheduler.policy=stealing"}), std::nullopt);
  EXPECT_EQ(policy(cfg), "stealing");
}

TEST(CafSettings, AnIniFileChoosesThePolicy) {
  const auto ini =
      std::filesystem::temp_directory_path() / ("octorun-caf-" + std::to_string(getpid()) + ".ini");
  std::ofstream(ini) << "[scheduler]\npolicy='stealing'\n";
  caf::actor_system_config cfg;
  const auto refused = configure_caf(cfg, {"--config-file=" + ini.string()});
  std::filesystem::remove(ini);
  ASSERT_EQ(refused, std::nullopt);
  EXPECT_EQ(policy(cfg), "stealing");
}

}  // namespace
}  // namespace octorun::manager
