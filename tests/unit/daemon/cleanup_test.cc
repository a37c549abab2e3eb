// SPDX-License-Identifier: GPL-2.0-only
// rld --cleanup's pure parts: which configuration it works with when the file is broken or gone,
// and which process it would stop.
#include "daemon/cleanup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace rl::daemon {
namespace {

namespace fs = std::filesystem;

class CleanupConfigTest : public ::testing::Test {
 protected:
  fs::path path =
      fs::temp_directory_path() / ("rl-cleanup-cfg-" + std::to_string(::getpid()) + ".yaml");
  void TearDown() override { fs::remove(path); }
};

TEST_F(CleanupConfigTest, AValidFileIsUsed) {
  std::ofstream(path) << "pin_root: /sys/fs/bpf/rl-elsewhere\n";
  auto c = cleanup_config(path, true);
  EXPECT_EQ(c.cfg.pin_root, "/sys/fs/bpf/rl-elsewhere");
  EXPECT_EQ(c.note, "");
}

TEST_F(CleanupConfigTest, ABrokenFileLeavesTheDefaultPinRootAndSaysWhy) {
  std::ofstream(path) << "pin_root: /sys/fs/bpf/rl-elsewhere\ninterfaces: [eth0\n";
  auto c = cleanup_config(path, true);
  EXPECT_EQ(c.cfg.pin_root, Config{}.pin_root);
  EXPECT_EQ(c.cfg.pin_root, "/sys/fs/bpf/rl");
  EXPECT_NE(c.note.find(path.string()), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("cleaning up the default pin root /sys/fs/bpf/rl"), std::string::npos)
      << c.note;
}

TEST_F(CleanupConfigTest, AnInvalidValueAlsoLeavesTheDefaults) {
  std::ofstream(path) << "pin_root: /sys/fs/bpf/rl-elsewhere\nkey_capacity: lots\n";
  auto c = cleanup_config(path, true);
  EXPECT_EQ(c.cfg.pin_root, "/sys/fs/bpf/rl");
  EXPECT_NE(c.note, "");
}

TEST_F(CleanupConfigTest, AMissingFileNamedOnTheCommandLineIsNoted) {
  auto c = cleanup_config(path, true);
  EXPECT_EQ(c.cfg.pin_root, "/sys/fs/bpf/rl");
  EXPECT_NE(c.note.find(path.string()), std::string::npos) << c.note;
}

TEST_F(CleanupConfigTest, TheDefaultFileMissingIsNothingToNote) {
  auto c = cleanup_config(path, false);
  EXPECT_EQ(c.cfg.pin_root, "/sys/fs/bpf/rl");
  EXPECT_EQ(c.note, "");
}

TEST(IsRld, OnlyAProcessNamedRld) {
  EXPECT_FALSE(is_rld(::getpid())) << "this test is not rld";
  EXPECT_FALSE(is_rld(0));
  EXPECT_FALSE(is_rld(-1));
}

}  // namespace
}  // namespace rl::daemon
