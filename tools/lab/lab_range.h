// SPDX-License-Identifier: GPL-2.0-only
// The only addresses the lab's senders (rlsend, rlflood) put in a frame. Sources: the benchmarking
// range 198.18.0.0/15 and the documentation range 2001:db8::/32, from which spoofed floods are
// drawn. Destinations: those, or the lab hosts' own documentation ranges 192.0.2.0/24 and
// 3fff::/20. None of them is routed on the internet, so a frame that escapes the lab by mistake
// cannot reach or impersonate a real host.
#pragma once

#include "common/prefix.h"

namespace rl::lab {

// May a frame carry this source? (198.18.0.0/15, 2001:db8::/32)
bool in_lab_range(const Prefix& p);
bool in_lab_range(const Address& a);

// May a frame go to this address? (the source ranges, or a lab host in 192.0.2.0/24, 3fff::/20)
bool is_lab_destination(const Address& a);

// Parses --src (an address or a prefix) and --dst; refuses them unless the source lies in the
// source ranges, the destination is a lab destination, and both are of one family.
Status parse_lab_addresses(const std::string& src, const std::string& dst, Prefix& src_out,
                           Address& dst_out);

}  // namespace rl::lab
