// SPDX-License-Identifier: GPL-2.0-only
#include "policy/file_read.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace rl::policy {
namespace {

namespace fs = std::filesystem;

std::string mib(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// The file a path names: the path itself, or the target of a link that stays inside the link's
// directory; nullopt and *why otherwise.
std::optional<fs::path> resolve(const std::string& path, std::string* why) {
  std::error_code ec;
  fs::path target = path;
  if (!fs::is_symlink(fs::symlink_status(target, ec))) return target;
  fs::path dir = fs::canonical(target.parent_path().empty() ? "." : target.parent_path(), ec);
  fs::path real = ec ? fs::path() : fs::canonical(target, ec);
  if (ec) {
    *why = "is a symbolic link that cannot be followed (" + ec.message() + "): refused";
    return std::nullopt;
  }
  auto rel = real.lexically_relative(dir);
  if (rel.empty() || *rel.begin() == "..") {
    *why = "is a symbolic link to a file outside its directory: refused";
    return std::nullopt;
  }
  return real;
}

}  // namespace

bool link_stays_inside(const std::string& path, std::string* why) {
  return resolve(path, why).has_value();
}

std::optional<std::string> read_bounded_file(const std::string& path, size_t max_bytes,
                                             const char* what, std::string* why,
                                             struct stat* st_out) {
  auto target = resolve(path, why);
  if (!target) return std::nullopt;
  int fd = ::open(target->c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *why = std::string("cannot read: ") + std::strerror(errno);
    return std::nullopt;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *why = std::string("cannot read: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    *why = std::string("is a directory, not ") + what;
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = "is not a regular file (a FIFO, socket or device): refused";
    return std::nullopt;
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    *why = "is " + std::to_string(st.st_size) + " bytes, more than the " + mib(max_bytes) + " " +
           what + " may hold";
    return std::nullopt;
  }
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = std::string("cannot read: ") + std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      *why = "is more than the " + mib(max_bytes) + " " + what + " may hold";
      return std::nullopt;
    }
  }
  if (st_out) *st_out = st;
  return text;
}

}  // namespace rl::policy
