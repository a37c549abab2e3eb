#include "lab_range.h"

namespace rl::rlsend {

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

}  // namespace rl::rlsend
