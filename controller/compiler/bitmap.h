// SPDX-License-Identifier: GPL-2.0-only
// Rule bitmaps: bit i is the rule at position i.
#pragma once

#include <cstring>

#include "rl_abi.h"

namespace rl::compiler {

inline void bitmap_set(rl_bitmap& b, size_t pos) { b.w[pos / 64] |= 1ULL << (pos % 64); }
inline bool bitmap_test(const rl_bitmap& b, size_t pos) {
  return (b.w[pos / 64] >> (pos % 64)) & 1;
}
inline rl_bitmap bitmap_or(const rl_bitmap& a, const rl_bitmap& b) {
  rl_bitmap r{};
  for (size_t i = 0; i < RL_RULE_WORDS; i++) r.w[i] = a.w[i] | b.w[i];
  return r;
}
inline bool bitmap_equal(const rl_bitmap& a, const rl_bitmap& b) {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}
struct BitmapLess {
  bool operator()(const rl_bitmap& a, const rl_bitmap& b) const {
    return std::memcmp(&a, &b, sizeof(a)) < 0;
  }
};

}  // namespace rl::compiler
