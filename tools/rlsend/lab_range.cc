#include "lab_range.h"

namespace rl::rlsend {

bool in_lab_range(const Prefix& p) {
  static const Prefix kV4 = *Prefix::parse("198.18.0.0/15");
  static const Prefix kV6 = *Prefix::parse("2001:db8::/32");
  return kV4.contains(p) || kV6.contains(p);
}

bool in_lab_range(const Address& a) { return in_lab_range(Prefix::of(a, a.width())); }

Status parse_lab_addresses(const std::string& src, const std::string& dst, Prefix& src_out,
                           Address& dst_out) {
  auto s = Prefix::parse(src);
  if (!s) return s.error().wrap("--src");
  auto d = Address::parse(dst);
  if (!d) return d.error().wrap("--dst");
  const char* outside = " is outside the lab ranges 198.18.0.0/15 and 2001:db8::/32: refused";
  if (!in_lab_range(*s)) return Error{0, "--src " + s->str() + outside};
  if (!in_lab_range(*d)) return Error{0, "--dst " + d->str() + outside};
  if (s->addr.family != d->family)
    return Error{0, "--src and --dst must be the same address family"};
  src_out = *s;
  dst_out = *d;
  return {};
}

}  // namespace rl::rlsend
