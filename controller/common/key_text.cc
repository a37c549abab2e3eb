// SPDX-License-Identifier: GPL-2.0-only
#include "common/key_text.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

namespace rl {

// A sync formats the text of every active key of a cluster rule, 100,000 of them per interval
// on a busy node: one buffer and one string, and IPv4 without inet_ntop's printf.
std::string key_text(uint8_t kind, uint8_t family, const __u32 addr[4], uint16_t dport,
                     uint8_t v4_prefix, uint8_t v6_prefix) {
  if (kind == RL_KEY_RULE) return "*";
  if (kind == RL_KEY_UNADMITTED && family == 0) return "new:*";
  char buf[INET6_ADDRSTRLEN + 16];
  char* const end = buf + sizeof(buf);
  char* p = buf;
  if (kind == RL_KEY_UNADMITTED) {
    // New sources without a budget token, sharing one bucket per prefix: "new:198.18.1.0/24".
    std::memcpy(p, "new:", 4);
    p += 4;
    kind = RL_KEY_SRC_PREFIX;
    v4_prefix = v6_prefix = static_cast<uint8_t>(dport);
  }
  if (kind == RL_KEY_DST_PREFIX) {
    // Destination keys read "dst:192.0.2.10", or with a shorter prefix "dst:192.0.2.0/24".
    std::memcpy(p, "dst:", 4);
    p += 4;
    if ((family == 6 ? v6_prefix : v4_prefix) < (family == 6 ? 128 : 32)) kind = RL_KEY_SRC_PREFIX;
  }
  if (kind == RL_KEY_SRC_DST) {
    // "198.18.0.7>192.0.2.10"; IPv6 keeps the /64 of each side: "2001:db8::/64>3fff::/64".
    __u32 src[4] = {addr[0], family == 6 ? addr[1] : 0, 0, 0};
    __u32 dst[4] = {family == 6 ? addr[2] : addr[1], family == 6 ? addr[3] : 0, 0, 0};
    std::string s = key_text(RL_KEY_SRC_PREFIX, family, src, 0, 32, 64);
    std::string d = key_text(RL_KEY_SRC_PREFIX, family, dst, 0, 32, 64);
    if (family == 4) {
      s = s.substr(0, s.find('/'));
      d = d.substr(0, d.find('/'));
    }
    return s + ">" + d;
  }
  if (family == 6) {
    if (!inet_ntop(AF_INET6, addr, p, INET6_ADDRSTRLEN)) return "?";
    p += std::strlen(p);
  } else {
    // As inet_ntop writes it: four decimal bytes, no leading zeros.
    const auto* b = reinterpret_cast<const uint8_t*>(addr);
    for (int i = 0; i < 4; i++) {
      if (i) *p++ = '.';
      p = std::to_chars(p, end, b[i]).ptr;
    }
  }
  // A per-source IPv6 key is the client's prefix (rl_key.h): "2001:db8:0:7::/64".
  const bool client_prefix =
      family == 6 && v6_prefix < 128 && (kind == RL_KEY_SRC_ADDR || kind == RL_KEY_SRC_ADDR_DPORT);
  if (kind == RL_KEY_SRC_PREFIX || client_prefix) {
    *p++ = '/';
    p = std::to_chars(p, end, family == 6 ? v6_prefix : v4_prefix).ptr;
  }
  if (kind == RL_KEY_SRC_ADDR_DPORT) {
    *p++ = '|';
    p = std::to_chars(p, end, dport).ptr;
  }
  return std::string(buf, p);
}

}  // namespace rl
