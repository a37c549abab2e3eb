// SPDX-License-Identifier: GPL-2.0-only
// Loopback ports for test servers.
#pragma once

#include <cstdint>

#include "common/result.h"

namespace rl::testing {

// A loopback port that was free a moment ago. Another process can take it before the caller
// binds it, so callers retry on failure.
Result<uint16_t> free_loopback_port();

}  // namespace rl::testing
