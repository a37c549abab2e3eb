// SPDX-License-Identifier: GPL-2.0-only
// One limiter key as the data path keeps it: the key rld builds for an address under a rule,
// and what its slot's state word means (tokens or window counts, a block). Pure: no kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/prefix.h"
#include "control/protocol.h"
#include "rl_abi.h"

namespace rl::daemon {

// The key the data path builds for `addr` under rule `r` (see rl_key_build in limiter.h).
rl_key key_for(const rl_rule& r, const Address& addr, uint16_t dport);

// The state of a key's slot at now_ns (CLOCK_MONOTONIC, the data path's clock):
//   blocked, blocked_for_seconds; token_bucket: tokens, burst, tat_ahead_seconds (how far the
//   theoretical arrival time runs ahead of now); windows: count and limit in this window
//   (sliding: the weighted estimate); unit: packets or bytes; fresh: the state equals a new
//   key's (a full bucket, an empty window).
control::KeyState key_state(const rl_rule& r, const rl_slot& slot, uint64_t now_ns);
// A connection limit's key, which has no slot: its open connections against the limit.
control::KeyState connections_state(const rl_rule& r, uint32_t open);
// The same as JSON.
control::Json describe_key_state(const rl_rule& r, const rl_slot& slot, uint64_t now_ns);

// "198.18.0.7", "198.18.0.7|53" (rlctl top's spelling of a source_port key) or a CIDR, whose
// address is taken: the address and the port if one was given.
Result<std::pair<Address, std::optional<uint16_t>>> parse_key_arg(const std::string& text);

}  // namespace rl::daemon
