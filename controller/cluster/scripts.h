// SPDX-License-Identifier: GPL-2.0-only
// The Lua scripts the store runs in Redis (scripts/*.lua), embedded at build time with their
// SHA1. Knowing the SHA1 up front lets a reconnect send SCRIPT LOAD and the first EVALSHA in
// the same round trip.
#pragma once

#include <string_view>

namespace rl::cluster {

struct Script {
  std::string_view name;
  std::string_view text;
  std::string_view sha1;  // lower-case hex, as SCRIPT LOAD returns it
};

namespace scripts {
extern const Script kSync;
extern const Script kHeartbeat;
extern const Script kPeers;
}  // namespace scripts

}  // namespace rl::cluster
