// SPDX-License-Identifier: GPL-2.0-only
// rlctl's side of the control socket.
#pragma once

#include <string>

#include "common/result.h"
#include "control/protocol.h"

namespace rl::control {

// Sends one request and returns the response; a daemon that is not running is an error that
// says so and what to do.
Result<Json> call(const std::string& socket_path, const Json& request, int timeout_ms = 30000);

}  // namespace rl::control
