// SPDX-License-Identifier: GPL-2.0-only
// rld --cleanup: takes rl off the host whatever state the host is in: every XDP link rl pinned,
// the pins, the stack's SYNPROXY table with the sysctl it changed. A removal must work when the
// configuration file is broken or gone, and while an rld still runs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "common/fd.h"
#include "common/result.h"
#include "daemon/config/config.h"

namespace rl::daemon {

// The configuration --cleanup works with: the file's when it loads, else the defaults (only the
// pin root matters), with `note` saying why the file was not used. Flags apply on top either way.
struct CleanupConfig {
  Config cfg;
  std::string note;  // "" when the file loaded or was absent and not asked for
};
CleanupConfig cleanup_config(const std::string& path, bool explicit_path);

// Whether /proc/<pid>/comm names rld: --cleanup signals the holder of the pin root's lock only
// then (a pid read from /proc/locks may have been reused meanwhile).
bool is_rld(pid_t pid);

// Asks the rld holding the pin root's lock to stop (SIGTERM; it leaves the data path attached as
// on any stop, which the cleanup then removes) and waits up to `wait` for the lock. Returns the
// lock, held from then on so that no rld starts on the pins while they are removed.
Result<UniqueFd> stop_running_rld(const std::string& pin_root, std::chrono::milliseconds wait);

// Everything above, for the configuration's pin root; the exit status (kExitOk when nothing of
// rl is left on the host's interfaces).
int cleanup(const Config& cfg);

}  // namespace rl::daemon
