// SPDX-License-Identifier: GPL-2.0-only
#include "files.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace rl::testing {

Result<TempDir> TempDir::create(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  if (!mkdtemp(tmpl.data())) return errno_error("mkdtemp " + tmpl);
  return TempDir(tmpl);
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Status write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Error{0, "cannot write " + path};
  return Status::Ok();
}

}  // namespace rl::testing
