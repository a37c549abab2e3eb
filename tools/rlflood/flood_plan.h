// SPDX-License-Identifier: GPL-2.0-only
// What the XDP program is loaded with: the template frame (source 0, valid checksums) and the
// constants that let it derive any other source's frame without reading the one it is given.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "options.h"

namespace rl::rlflood {

struct FloodPlan {
  std::vector<uint8_t> frame;
  bool v6 = false, tcp = false;
  uint32_t sources = 1;
  uint32_t base_low = 0;  // the last 32 bits of source 0, host order
  uint32_t ip_csum_base = 0, l4_csum_base = 0;
  uint16_t base_sport = 0;  // the template's source port; frame k's is base_sport + k mod sports
  uint32_t sports = 1;
  bool shuffle = false;
  uint8_t perm_bits = 1;
  uint32_t perm_seed = 0;
};

Result<FloodPlan> plan_flood(const Options& o, const lab::Mac& src_mac, int mtu);

// The program's permutation, mirrored here to pick a seed for which every index reaches
// [0, n) within kPermMaxWalk steps (rlflood.bpf.c, PERM_MAX_WALK), and for the tests.
constexpr int kPermMaxWalk = 64;
uint32_t perm_mix(uint32_t x, uint8_t bits, uint32_t seed);
// The source index of the k-th frame (k < n), or n when the walk is longer than allowed.
uint32_t perm_index(uint32_t k, uint32_t n, uint8_t bits, uint32_t seed);

}  // namespace rl::rlflood
