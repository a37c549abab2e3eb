// SPDX-License-Identifier: GPL-2.0-only
// Rule bitmaps: bit i is the rule at position i. A bitmap keeps no zero word past its last rule,
// so that two bitmaps of the same rules compare equal however they were built, and one of a few
// high-priority rules stays small in a policy of thousands.
#pragma once

#include <cstdint>
#include <vector>

namespace rl::compiler {

struct RuleBitmap {
  std::vector<uint64_t> w;

  uint64_t word(size_t i) const { return i < w.size() ? w[i] : 0; }
  friend bool operator==(const RuleBitmap&, const RuleBitmap&) = default;
  friend auto operator<=>(const RuleBitmap&, const RuleBitmap&) = default;
};

inline void bitmap_set(RuleBitmap& b, size_t pos) {
  if (b.w.size() <= pos / 64) b.w.resize(pos / 64 + 1, 0);
  b.w[pos / 64] |= 1ULL << (pos % 64);
}
inline void bitmap_clear(RuleBitmap& b, size_t pos) {
  if (b.w.size() <= pos / 64) return;
  b.w[pos / 64] &= ~(1ULL << (pos % 64));
  while (!b.w.empty() && !b.w.back()) b.w.pop_back();
}
inline bool bitmap_test(const RuleBitmap& b, size_t pos) {
  return (b.word(pos / 64) >> (pos % 64)) & 1;
}
inline RuleBitmap bitmap_or(const RuleBitmap& a, const RuleBitmap& b) {
  RuleBitmap r = a.w.size() >= b.w.size() ? a : b;
  const RuleBitmap& other = a.w.size() >= b.w.size() ? b : a;
  for (size_t i = 0; i < other.w.size(); i++) r.w[i] |= other.w[i];
  return r;
}

}  // namespace rl::compiler
