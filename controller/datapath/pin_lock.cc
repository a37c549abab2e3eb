// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/pin_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace rl {
namespace {

// The pid holding a flock on the inode, as /proc/locks reports it ("1: FLOCK ADVISORY WRITE
// <pid> <major>:<minor>:<inode> 0 EOF", device numbers in hex); 0 if none is listed.
pid_t flock_holder(const struct stat& st) {
  char dev[64];
  std::snprintf(dev, sizeof(dev), "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, type, mode, rw, where;
    long pid = 0;
    if (!(f >> id >> type) || type == "->") continue;  // a waiter, not a holder
    if (f >> mode >> rw >> pid >> where && type == "FLOCK" && where == dev)
      return static_cast<pid_t>(pid);
  }
  return 0;
}

}  // namespace

pid_t pin_root_holder(const std::string& root) {
  struct stat st {};
  return ::stat(root.c_str(), &st) == 0 ? flock_holder(st) : 0;
}

Result<UniqueFd> lock_pin_root(const std::string& root) {
  UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return errno_error("open pin root " + root);
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return fd;
  int e = errno;
  if (e != EWOULDBLOCK) return errno_error("lock pin root " + root, e);
  struct stat st {};
  pid_t holder = ::fstat(fd.get(), &st) == 0 ? flock_holder(st) : 0;
  return Error{EBUSY, "another rld" +
                          (holder ? " (pid " + std::to_string(holder) + ")" : std::string()) +
                          " is running on pin root " + root +
                          "; stop it first, or give this one another --pin-root"};
}

}  // namespace rl
