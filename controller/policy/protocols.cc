// SPDX-License-Identifier: GPL-2.0-only
#include "policy/protocols.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "rl_abi.h"

namespace rl::policy::detail {
namespace {

struct Name {
  const char* word;
  uint8_t number;
};

constexpr Name kProtocols[] = {{"tcp", kTcp}, {"udp", kUdp}, {"icmp", kIcmp}, {"icmpv6", kIcmpv6}};

constexpr Name kIcmpTypes[] = {
    {"echo-reply", 0}, {"dest-unreachable", 3}, {"echo-request", 8}, {"time-exceeded", 11}};
constexpr Name kIcmpv6Types[] = {
    {"dest-unreachable", 1}, {"time-exceeded", 3}, {"echo-request", 128}, {"echo-reply", 129}};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

template <size_t N>
std::optional<uint8_t> find(const Name (&names)[N], std::string_view word) {
  std::string w = lower(word);
  for (const auto& n : names)
    if (w == n.word) return n.number;
  return std::nullopt;
}

template <size_t N>
std::vector<std::string> words(const Name (&names)[N]) {
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(n.word);
  return out;
}

}  // namespace

std::optional<uint8_t> protocol_number(std::string_view name) { return find(kProtocols, name); }

std::vector<std::string> protocol_names() { return words(kProtocols); }

std::string protocol_name(uint8_t number) {
  for (const auto& n : kProtocols)
    if (n.number == number) return n.word;
  return std::to_string(number);
}

std::optional<uint8_t> icmp_type_number(uint8_t protocol, std::string_view name) {
  if (protocol == kIcmp) return find(kIcmpTypes, name);
  if (protocol == kIcmpv6) return find(kIcmpv6Types, name);
  return std::nullopt;
}

std::vector<std::string> icmp_type_names(uint8_t protocol) {
  if (protocol == kIcmp) return words(kIcmpTypes);
  if (protocol == kIcmpv6) return words(kIcmpv6Types);
  return {};
}

const std::vector<std::string>& tcp_flag_names() {
  static const std::vector<std::string> names{"fin", "syn", "rst", "psh",
                                              "ack", "urg", "ece", "cwr"};
  return names;
}

const std::vector<FragmentClass>& fragment_classes() {
  static const std::vector<FragmentClass> classes{
      {"none", 1u << RL_FRAG_NONE},
      {"first", 1u << RL_FRAG_FIRST},
      {"later", 1u << RL_FRAG_LATER},
      {"any", (1u << RL_FRAG_FIRST) | (1u << RL_FRAG_LATER)}};
  return classes;
}

}  // namespace rl::policy::detail
