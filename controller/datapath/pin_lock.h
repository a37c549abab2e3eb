// SPDX-License-Identifier: GPL-2.0-only
// One rld per pin root: two daemons driving the same pinned maps and links would fight over the
// rule generations and the control socket. The lock is a flock on the pin root directory itself
// (bpffs holds no regular files), so the kernel drops it when the holder exits, however it ends.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/fd.h"
#include "common/result.h"

namespace rl {

// Takes the lock without waiting. Held as long as the returned descriptor is open. When another
// process holds it, the error names that process's pid (from /proc/locks).
Result<UniqueFd> lock_pin_root(const std::string& root);

// The pid holding the lock, as this process's pid namespace sees it; 0 if none (or one this
// namespace cannot see).
pid_t pin_root_holder(const std::string& root);

}  // namespace rl
