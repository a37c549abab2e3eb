// SPDX-License-Identifier: GPL-2.0-only
#include "netns.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace rl::testing {

Result<ScopedNetns> ScopedNetns::enter(const std::string& name) {
  int home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home < 0) return errno_error("open /proc/thread-self/ns/net");
  std::string path = "/run/netns/" + name;
  int target = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (target < 0) {
    Error e = errno_error("open " + path);
    close(home);
    return e;
  }
  int r = setns(target, CLONE_NEWNET);
  Error e = errno_error("setns " + path);
  close(target);
  if (r != 0) {
    close(home);
    return e;
  }
  return ScopedNetns(home);
}

ScopedNetns::ScopedNetns(ScopedNetns&& o) noexcept : home_(std::exchange(o.home_, -1)) {}

ScopedNetns::~ScopedNetns() {
  if (home_ < 0) return;
  // Staying in a lab namespace would send the rest of the test's traffic somewhere else; no
  // way to recover from that.
  if (setns(home_, CLONE_NEWNET) != 0) {
    std::perror("ScopedNetns: setns back to the original namespace");
    std::abort();
  }
  close(home_);
}

}  // namespace rl::testing
