// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/light.h"

#include <algorithm>

#include "rl_abi.h"

namespace rl::cluster {

Light light_for(uint64_t amount, uint64_t nodes) {
  nodes = std::max<uint64_t>(nodes, 1);
  uint64_t below = amount / (4 * nodes);
  if (nodes > 1) below = std::min<uint64_t>(below, amount / (32 * (nodes - 1)));
  below = std::min<uint64_t>(below, RL_SKETCH_SATURATED - 2);
  Light l;
  l.light = static_cast<uint32_t>(below + 1);
  l.step = std::max<uint64_t>(amount / (32 * nodes), 1);
  l.hidden = hidden_for(l.light, l.step, nodes);
  return l;
}

uint64_t hidden_for(uint32_t light, uint64_t step, uint64_t nodes) {
  const uint64_t below = light ? light - 1 : 0;
  nodes = std::max<uint64_t>(nodes, 1);
  step = std::max<uint64_t>(step, 1);
  return (nodes - 1) * std::max(2 * below, step - 1) + (step - 1);
}

}  // namespace rl::cluster
