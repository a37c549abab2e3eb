// SPDX-License-Identifier: GPL-2.0-only
// IP protocol and ICMP type names accepted in policy files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rl::policy::detail {

inline constexpr uint8_t kIcmp = 1;
inline constexpr uint8_t kTcp = 6;
inline constexpr uint8_t kUdp = 17;
inline constexpr uint8_t kIcmpv6 = 58;

// tcp, udp, icmp, icmpv6 (any case).
std::optional<uint8_t> protocol_number(std::string_view name);
std::vector<std::string> protocol_names();
// "tcp" for 6, "132" for protocols without a name here.
std::string protocol_name(uint8_t number);

// The type names for `protocol` (icmp or icmpv6): the same word means different numbers in
// ICMP and ICMPv6, e.g. echo-request is 8 and 128.
std::optional<uint8_t> icmp_type_number(uint8_t protocol, std::string_view name);
std::vector<std::string> icmp_type_names(uint8_t protocol);

// The TCP header's flag bits by name, in bit order: fin (0x01), syn, rst, psh, ack, urg, ece,
// cwr (0x80).
const std::vector<std::string>& tcp_flag_names();

// The fragment classes a rule may name, each with the packets it admits as a mask of
// 1 << enum rl_frag: none, first and later (one class each), then any (first or later).
struct FragmentClass {
  std::string name;
  uint8_t mask;
};
const std::vector<FragmentClass>& fragment_classes();

}  // namespace rl::policy::detail
