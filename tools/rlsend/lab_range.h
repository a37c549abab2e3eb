// The only addresses rlsend will put in a frame: the benchmarking range 198.18.0.0/15 and the
// documentation range 2001:db8::/32. Neither is routed on the internet, so a frame that escapes
// the lab by mistake cannot reach or impersonate a real host.
#pragma once

#include "common/prefix.h"

namespace rl::rlsend {

bool in_lab_range(const Prefix& p);
bool in_lab_range(const Address& a);

}  // namespace rl::rlsend
