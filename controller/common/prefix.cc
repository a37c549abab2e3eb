// SPDX-License-Identifier: GPL-2.0-only
#include "common/prefix.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

namespace rl {

Result<Address> Address::parse(std::string_view text) {
  // On the stack: set files parse millions of addresses, and an IPv6 one outgrows a string's
  // inline buffer.
  char s[INET6_ADDRSTRLEN + 1];
  const bool v6 = text.find(':') != std::string_view::npos;
  Address a;
  a.family = v6 ? 6 : 4;
  bool ok = text.size() < sizeof(s);
  if (ok) {
    std::memcpy(s, text.data(), text.size());
    s[text.size()] = '\0';
    ok = inet_pton(v6 ? AF_INET6 : AF_INET, s, a.bytes.data()) == 1;
  }
  if (!ok)
    return Error{
        0, std::string("invalid IPv") + (v6 ? "6" : "4") + " address '" + std::string(text) + "'"};
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
  const size_t whole = std::min<size_t>(len, a.width()) / 8, rest = len % 8;
  size_t from = whole;
  if (rest && whole < 16) p.addr.bytes[from++] &= static_cast<uint8_t>(0xff00u >> rest);
  for (size_t i = from; i < 16; i++) p.addr.bytes[i] = 0;
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
