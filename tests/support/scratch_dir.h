// SPDX-License-Identifier: GPL-2.0-only
// A fixture whose every test has a policy directory of its own, empty at the start and removed
// at the end, named after the test so that parallel runs never share one.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace rl::testing {

class ScratchDirTest : public ::testing::Test {
 protected:
  // `prefix` starts the directory's name, under the system's temporary directory.
  explicit ScratchDirTest(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `text` to the file `name` in the directory; its path.
  std::string write(const std::string& name, const std::string& text) {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace rl::testing
