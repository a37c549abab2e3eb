// SPDX-License-Identifier: GPL-2.0-only
// Scratch directories and whole-file reads and writes for tests.
#pragma once

#include <string>

#include "common/result.h"

namespace rl::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction, so a
// failing assertion leaves nothing behind.
class TempDir {
 public:
  static Result<TempDir> create(const std::string& prefix);
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

std::string read_text(const std::string& path);  // "" if it cannot be read
Status write_text(const std::string& path, const std::string& text);

}  // namespace rl::testing
