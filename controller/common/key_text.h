// SPDX-License-Identifier: GPL-2.0-only
// A limiter key as text, the same in logs, rlctl and Redis key names on every node:
//   source "198.18.0.7" (IPv6: the client's prefix, "2001:db8:0:7::/64"), source_prefix
//   "198.18.0.0/24", source_port "198.18.0.7|53" ("2001:db8:0:7::/64|53"), rule "*";
//   destination "dst:192.0.2.10" (with a shorter prefix "dst:192.0.2.0/24"), source_destination
//   "198.18.0.7>192.0.2.10" (IPv6: "2001:db8::/64>3fff::/64");
//   new sources without a budget token, sharing a bucket: "new:*" (per rule) or
//   "new:198.18.0.0/24" (per prefix).
#pragma once

#include <string>

#include "rl_abi.h"

namespace rl {

std::string key_text(uint8_t kind, uint8_t family, const __u32 addr[4], uint16_t dport,
                     uint8_t v4_prefix, uint8_t v6_prefix);

inline std::string key_text(const rl_key& k, const rl_rule& r) {
  return key_text(k.kind, k.family, k.addr, k.dport, r.v4_prefix, r.v6_prefix);
}

}  // namespace rl
