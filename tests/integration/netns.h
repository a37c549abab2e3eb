// SPDX-License-Identifier: GPL-2.0-only
// Moves the calling thread into a named network namespace for a scope, for work that must
// happen in-process there (attaching an XDP program by ifindex, opening a socket); everything
// else goes through `ip netns exec` in a child.
#pragma once

#include <string>

#include "common/result.h"

namespace rl::testing {

class ScopedNetns {
 public:
  static Result<ScopedNetns> enter(const std::string& name);  // /run/netns/<name>

  ScopedNetns(ScopedNetns&& o) noexcept;
  ScopedNetns& operator=(ScopedNetns&&) = delete;
  ScopedNetns(const ScopedNetns&) = delete;
  ~ScopedNetns();  // back to the namespace the thread came from

 private:
  ScopedNetns(int home) : home_(home) {}
  int home_ = -1;
};

}  // namespace rl::testing
