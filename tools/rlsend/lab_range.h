// The only addresses rlsend will put in a frame: the benchmarking range 198.18.0.0/15 and the
// documentation range 2001:db8::/32. Neither is routed on the internet, so a frame that escapes
// the lab by mistake cannot reach or impersonate a real host.
#pragma once

#include "common/prefix.h"

namespace rl::rlsend {

bool in_lab_range(const Prefix& p);
bool in_lab_range(const Address& a);

// Parses --src (an address or a prefix) and --dst; refuses them unless both lie in the lab ranges
// and are of one family.
Status parse_lab_addresses(const std::string& src, const std::string& dst, Prefix& src_out,
                           Address& dst_out);

}  // namespace rl::rlsend
