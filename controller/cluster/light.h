// SPDX-License-Identifier: GPL-2.0-only
// What a node may leave unreported of a key of a cluster rule, and what that hides from Redis.
// A key is light (bpf/lib/cluster.h, abi/rl_cluster_sketch.h) while the node admitted less than
// `light` of it in the window: the kernel keeps it in a sketch and Redis never hears of it. Once
// promoted, the kernel counts it exactly, and rld sends its count once at least `step` of it is
// unsent (thresholded counts: each message carries `step` or more). What the fleet may so hold
// unreported, `hidden`, is taken off the limit Redis judges by (docs/cluster.md, "Worst-case
// overshoot").
#pragma once

#include <cstdint>

namespace rl::cluster {

struct Light {
  uint32_t light = 1;   // 1: every key is promoted at once
  uint64_t step = 1;    // 1: every admitted unit is sent at the next pass
  uint64_t hidden = 0;  // the most the fleet may hold unreported of a key, per window
};

// For a fleet limit of `amount` per window over `nodes` nodes.
//  - light - 1 = min(amount / 4N, amount / 32(N - 1)): a quarter of the node's share, and for a
//    fleet, what keeps the other nodes' light counts within amount / 16 over the two windows a
//    sliding estimate spans. A node alone hides no light count from itself: the count is sent,
//    over-estimated, when the key is promoted.
//  - step = amount / 32N: each node's unsent count stays below it.
//  - hidden = (N - 1) max(2 (light - 1), step - 1) + (step - 1): every other node's light or unsent
//    count, and this node's unsent one; at most 3 amount / 32.
Light light_for(uint64_t amount, uint64_t nodes);

// The hidden part above for a given threshold and step (light_for's, or a threshold the kernel
// kept when a newer one could not be written).
uint64_t hidden_for(uint32_t light, uint64_t step, uint64_t nodes);

}  // namespace rl::cluster
