#include "daemon/key_text.h"

#include <cstring>

#include "common/prefix.h"

namespace rl::daemon {

std::string key_text(uint8_t kind, uint8_t family, const __u32 addr[4], uint16_t dport,
                     uint8_t v4_prefix, uint8_t v6_prefix) {
  if (kind == RL_KEY_RULE) return "*";
  Address a;
  a.family = family == 6 ? 6 : 4;
  std::memcpy(a.bytes.data(), addr, a.family == 4 ? 4 : 16);
  std::string s = a.str();
  if (kind == RL_KEY_SRC_PREFIX) s += "/" + std::to_string(a.family == 4 ? v4_prefix : v6_prefix);
  if (kind == RL_KEY_SRC_ADDR_DPORT) s += "|" + std::to_string(dport);
  return s;
}

}  // namespace rl::daemon
