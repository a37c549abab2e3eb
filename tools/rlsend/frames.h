// SPDX-License-Identifier: GPL-2.0-only
// The frames rlsend cycles through: one per source address, built once up front so the send loop
// only copies bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "options.h"

namespace rl::rlsend {

using Frame = std::vector<uint8_t>;

// The i-th source (0-based) drawn from a prefix: the prefix address itself for a full-length
// prefix, otherwise prefix + 1 + i.
Address nth_source(const Prefix& p, uint32_t i);

// Builds options.sources frames from src_mac to options.dst_mac. Fails when --size cannot hold
// the headers or does not fit the MTU.
Result<std::vector<Frame>> build_frames(const Options& o, const Mac& src_mac, int mtu);

}  // namespace rl::rlsend
