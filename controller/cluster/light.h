// SPDX-License-Identifier: GPL-2.0-only
// The light threshold of a cluster rule (bpf/lib/cluster.h, abi/rl_cluster_sketch.h): a node
// sends Redis nothing of a key while it admitted less than `light` of it in the window. What
// the fleet may so admit unreported, `hidden`, is taken off the limit Redis judges by
// (docs/cluster.md, "Worst-case overshoot").
#pragma once

#include <cstdint>

namespace rl::cluster {

struct Light {
  uint32_t light = 1;   // 1: every key is counted exactly
  uint64_t hidden = 0;  // the most the other nodes may hold unreported of a key, per window
};

// For a fleet limit of `amount` per window over `nodes` nodes. A node alone hides nothing from
// itself: its own light count is reported, over-estimated, when the key is promoted. With more,
// each other node may hold light - 1 in each of the two windows a sliding estimate spans, and
// light is chosen so that this stays within amount / 16.
Light light_for(uint64_t amount, uint64_t nodes);

}  // namespace rl::cluster
