// SPDX-License-Identifier: GPL-2.0-only
// What rld does for maps that another rld left pinned, other than its own layout's fresh state.
//
// Within one RL_ABI_VERSION, rld adopts pinned maps in place (loader.cc); a change of any map's
// shape or meaning bumps the version, and rld then replaces such pins instead of adopting them,
// carrying over what it can read (the runtime lists). The data path's own side of the runtime
// entries' length (bpf/lib/classify.h: a length of 0 is a /0's, or an older entry's) and of an
// older key state (bpf/lib/limiter.h) stay with the program.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "rl_abi.h"

namespace rl::compat {

// Across layouts: a replacing rld carries the runtime entries over from the pinned maps of the
// data path it replaces (runtime_lists.h, carry_from), reading them as its own maps. That is
// right for the layouts whose runtime maps (rl_runtime_v4/v6, rl_host_acl_v4/v6, rl_hosts_v4/v6,
// their keys, entries, sets and host words) are this one's: those from kRuntimeLayoutSinceAbi up
// to RL_ABI_VERSION. A change to any of them raises it to the new RL_ABI_VERSION (or teaches
// rld to read the older form); a map whose shape differs all the same is not read.
inline constexpr uint32_t kRuntimeLayoutSinceAbi = 9;

// The runtime overrides (rl_override_v4/v6) came with this ABI and are read the same way: a
// change to their keys or entries raises it.
inline constexpr uint32_t kOverridesSinceAbi = 11;

// Why the runtime maps of data path ABI `abi` cannot be read, or "".
std::string runtime_layout_unreadable(uint32_t abi);

// Across layouts, for good: rl_control's first words, abi_version among them, keep their place
// in every layout, so the version of a pinned data path of any layout can be read. Its value may
// be larger than this layout's (the kernel writes the whole value).
Result<rl_control> read_pinned_control(int fd, const std::string& name);

}  // namespace rl::compat
