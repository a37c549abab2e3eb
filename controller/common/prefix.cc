// SPDX-License-Identifier: GPL-2.0-only
#include "common/prefix.h"

#include <arpa/inet.h>

#include <cstring>

namespace rl {

Result<Address> Address::parse(std::string_view text) {
  std::string s(text);
  Address a;
  if (s.find(':') != std::string::npos) {
    a.family = 6;
    if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) != 1)
      return Error{0, "invalid IPv6 address '" + s + "'"};
  } else {
    a.family = 4;
    if (inet_pton(AF_INET, s.c_str(), a.bytes.data()) != 1)
      return Error{0, "invalid IPv4 address '" + s + "'"};
  }
  return a;
}

std::string Address::str() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(family == 4 ? AF_INET : AF_INET6, bytes.data(), buf, sizeof(buf));
  return buf;
}

Prefix Prefix::of(const Address& a, uint8_t len) {
  Prefix p;
  p.addr = a;
  p.len = len;
  for (size_t i = len; i < a.width(); i++) p.addr.bytes[i / 8] &= ~(1u << (7 - i % 8));
  if (a.family == 4)
    for (size_t i = 4; i < 16; i++) p.addr.bytes[i] = 0;
  return p;
}

Result<Prefix> Prefix::parse(std::string_view text) {
  auto slash = text.find('/');
  auto addr = Address::parse(text.substr(0, slash));
  if (!addr) return addr.error();
  size_t len = addr->width();
  if (slash != std::string_view::npos) {
    auto lt = text.substr(slash + 1);
    if (lt.empty() || lt.size() > 3)
      return Error{0, "invalid prefix length in '" + std::string(text) + "'"};
    len = 0;
    for (char c : lt) {
      if (c < '0' || c > '9')
        return Error{0, "invalid prefix length in '" + std::string(text) + "'"};
      len = len * 10 + (c - '0');
    }
    if (len > addr->width())
      return Error{0, "prefix length " + std::to_string(len) + " exceeds " +
                          std::to_string(addr->width()) + " in '" + std::string(text) + "'"};
  }
  Prefix p = of(*addr, static_cast<uint8_t>(len));
  if (p.addr != *addr)
    return Error{0, "'" + std::string(text) + "' has host bits set; did you mean " + p.str() + "?"};
  return p;
}

std::string Prefix::str() const { return addr.str() + "/" + std::to_string(len); }

bool Prefix::contains(const Address& a) const {
  if (a.family != addr.family) return false;
  const size_t whole = len / 8, rest = len % 8;
  if (std::memcmp(a.bytes.data(), addr.bytes.data(), whole) != 0) return false;
  if (!rest) return true;
  const auto mask = static_cast<uint8_t>(0xff00u >> rest);
  return ((a.bytes[whole] ^ addr.bytes[whole]) & mask) == 0;
}

}  // namespace rl
