// SPDX-License-Identifier: GPL-2.0-only
// Policy files as the integration tests hand them to rld: most need one UDP rule and differ only
// in its rate and burst.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rl::testing {

// One rule entry of a policy file: UDP to `port`, limited to `rate` (as a policy writes it:
// "100/s", "1/min"; tests of refusals pass what a policy must not say) with `burst`.
inline std::string udp_rule_text(const std::string& name, int port, const std::string& rate,
                                 uint64_t burst) {
  return "  - name: " + name + "\n    match: {protocol: udp, port: " + std::to_string(port) +
         "}\n    limit: {rate: " + rate + ", burst: " + std::to_string(burst) + "}\n";
}

// A policy file of the rules given.
inline std::string policy_text(const std::vector<std::string>& rules) {
  std::string text = "rules:\n";
  for (const auto& r : rules) text += r;
  return text;
}

// The policy most tests use: one rule, udp9, on UDP port 9, which rlsend targets by default.
inline std::string udp9_policy(const std::string& rate, uint64_t burst) {
  return policy_text({udp_rule_text("udp9", 9, rate, burst)});
}

}  // namespace rl::testing
