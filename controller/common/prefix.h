// SPDX-License-Identifier: GPL-2.0-only
// IPv4/IPv6 addresses and CIDR prefixes as the policy model and the compiler see them.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "common/result.h"

namespace rl {

struct Address {
  uint8_t family = 4;               // 4 or 6
  std::array<uint8_t, 16> bytes{};  // network order; IPv4 uses the first 4 bytes

  static Result<Address> parse(std::string_view text);
  std::string str() const;
  size_t width() const { return family == 4 ? 32 : 128; }
  bool bit(size_t i) const { return (bytes[i / 8] >> (7 - i % 8)) & 1; }
  // By family, then the bytes as one big-endian number: the order of comparing them one by one,
  // in two word compares (set files sort and merge millions of prefixes).
  std::strong_ordering operator<=>(const Address& o) const {
    if (family != o.family) return family <=> o.family;
    const uint64_t x[2] = {word(0), word(8)}, y[2] = {o.word(0), o.word(8)};
    return x[0] != y[0] ? x[0] <=> y[0] : x[1] <=> y[1];
  }
  bool operator==(const Address&) const = default;

 private:
  uint64_t word(size_t at) const {
    uint64_t w;
    std::memcpy(&w, bytes.data() + at, sizeof(w));
    return __builtin_bswap64(w);
  }
};

struct Prefix {
  Address addr;  // host bits are zero
  uint8_t len = 0;

  // "198.18.0.0/15", "2001:db8::/32"; a bare address is a full-length prefix. Host bits set
  // below the length are an error (they usually mean a typo).
  static Result<Prefix> parse(std::string_view text);
  static Prefix of(const Address& a, uint8_t len);  // masks host bits
  std::string str() const;
  bool contains(const Address& a) const;
  bool is_host() const { return len == addr.width(); }  // a /32 or /128
  bool contains(const Prefix& p) const {
    return p.addr.family == addr.family && p.len >= len && contains(p.addr);
  }
  auto operator<=>(const Prefix&) const = default;
};

}  // namespace rl
