// SPDX-License-Identifier: GPL-2.0-only
#include "lab_range.h"

namespace rl::lab {

bool in_lab_range(const Prefix& p) {
  static const Prefix kV4 = *Prefix::parse("198.18.0.0/15");
  static const Prefix kV6 = *Prefix::parse("2001:db8::/32");
  return kV4.contains(p) || kV6.contains(p);
}

bool in_lab_range(const Address& a) { return in_lab_range(Prefix::of(a, a.width())); }

bool is_lab_destination(const Address& a) {
  static const Prefix kHosts4 = *Prefix::parse("192.0.2.0/24");
  static const Prefix kHosts6 = *Prefix::parse("3fff::/20");
  return in_lab_range(a) || kHosts4.contains(a) || kHosts6.contains(a);
}

Status parse_lab_addresses(const std::string& src, const std::string& dst, Prefix& src_out,
                           Address& dst_out) {
  auto s = Prefix::parse(src);
  if (!s) return s.error().wrap("--src");
  auto d = Address::parse(dst);
  if (!d) return d.error().wrap("--dst");
  if (!in_lab_range(*s))
    return Error{0, "--src " + s->str() +
                        " is outside the lab ranges 198.18.0.0/15 and 2001:db8::/32: refused"};
  if (!is_lab_destination(*d))
    return Error{0, "--dst " + d->str() +
                        " is outside the lab ranges 198.18.0.0/15, 2001:db8::/32, 192.0.2.0/24 "
                        "and 3fff::/20: refused"};
  if (s->addr.family != d->family)
    return Error{0, "--src and --dst must be the same address family"};
  src_out = *s;
  dst_out = *d;
  return {};
}

}  // namespace rl::lab
