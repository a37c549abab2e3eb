// SPDX-License-Identifier: GPL-2.0-only
#include "window_model.h"

#include <bit>

#include "cluster/sync_batch.h"

namespace rl::testing {
namespace {

struct Counts {
  uint64_t cur = 0;
  uint64_t prev = 0;
};

Counts rolled(const std::optional<WindowState>& s, uint64_t index) {
  if (!s) return {};
  if (s->index >= index) return {s->cur, s->prev};
  if (s->index + 1 == index) return {0, s->cur};
  return {};
}

}  // namespace

std::string pack_counts(const WindowState& s) {
  std::string out;
  for (uint64_t v : {s.index, s.cur, s.prev}) {
    auto bits = std::bit_cast<uint64_t>(static_cast<double>(v));
    for (int b = 0; b < 8; b++) out.push_back(static_cast<char>(bits >> (8 * b)));
  }
  return out;
}

std::optional<WindowState> unpack_counts(const std::string& value) {
  if (value.size() != cluster::kCountsSize) return std::nullopt;
  uint64_t v[3];
  for (int i = 0; i < 3; i++) {
    uint64_t bits = 0;
    for (int b = 0; b < 8; b++)
      bits |= uint64_t{static_cast<unsigned char>(value[8 * i + b])} << (8 * b);
    v[i] = static_cast<uint64_t>(std::bit_cast<double>(bits));
  }
  return WindowState{v[0], v[1], v[2]};
}

uint64_t window_weight(uint64_t elapsed_ms, uint64_t window_ms) {
  return ((window_ms - elapsed_ms) << 16) / window_ms;
}

uint64_t window_estimate(const std::optional<WindowState>& s, uint64_t now_ms, uint64_t window_ms) {
  uint64_t index = now_ms / window_ms;
  Counts c = rolled(s, index);
  auto weighted = static_cast<uint64_t>(
      (static_cast<unsigned __int128>(c.prev) * window_weight(now_ms % window_ms, window_ms)) >>
      16);
  return weighted + c.cur;
}

std::optional<WindowState> window_add(const std::optional<WindowState>& s, uint64_t delta,
                                      uint64_t now_ms, uint64_t window_ms) {
  if (delta == 0) return s;
  uint64_t index = now_ms / window_ms;
  Counts c = rolled(s, index);
  WindowState out{s && s->index > index ? s->index : index, c.cur + delta, c.prev};
  return out;
}

uint64_t window_settle_ms(const std::optional<WindowState>& s, uint64_t now_ms, uint64_t window_ms,
                          uint64_t limit, bool linear) {
  // Two windows on, both counts have rolled out: the estimate is 0.
  uint64_t hi = 2 * window_ms + 1;
  if (linear) {
    for (uint64_t d = 0; d < hi; d++)
      if (window_estimate(s, now_ms + d, window_ms) <= limit) return d;
    return hi;
  }
  uint64_t lo = 0;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (window_estimate(s, now_ms + mid, window_ms) <= limit)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

}  // namespace rl::testing
