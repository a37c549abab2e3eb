// SPDX-License-Identifier: GPL-2.0-only
// What either engine sends from: the template frame (source 0, valid checksums) and the
// constants that derive any other frame from it (flood_frame.bpf.h).
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "flood_frame.bpf.h"
#include "options.h"

namespace rl::rlflood {

struct FloodPlan {
  std::vector<uint8_t> frame;
  flood_frame_spec spec{};
  bool v6() const { return spec.is_v6 != 0; }
  bool tcp() const { return spec.is_tcp != 0; }
};

Result<FloodPlan> plan_flood(const Options& o, const lab::Mac& src_mac, int mtu);

}  // namespace rl::rlflood
