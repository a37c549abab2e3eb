// SPDX-License-Identifier: GPL-2.0-only
// Loopback ports for test servers.
#pragma once

#include <cstdint>

#include "common/result.h"

namespace rl::testing {

// A loopback port that was free a moment ago. Another process can take it before the caller
// binds it, so callers retry on failure.
Result<uint16_t> free_loopback_port();

// A free loopback port p whose p + offset is free too (a Redis Cluster node's bus port).
Result<uint16_t> free_loopback_port_pair(uint16_t offset);

}  // namespace rl::testing
