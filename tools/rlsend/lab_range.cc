#include "lab_range.h"

namespace rl::rlsend {

bool in_lab_range(const Prefix& p) {
  static const Prefix kV4 = *Prefix::parse("198.18.0.0/15");
  static const Prefix kV6 = *Prefix::parse("2001:db8::/32");
  return kV4.contains(p) || kV6.contains(p);
}

bool in_lab_range(const Address& a) { return in_lab_range(Prefix::of(a, a.width())); }

}  // namespace rl::rlsend
