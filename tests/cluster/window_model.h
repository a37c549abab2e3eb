// SPDX-License-Identifier: GPL-2.0-only
// The sliding window as docs/cluster.md defines it, written plainly (128-bit products, no
// closed forms) to judge what the Lua script reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rl::testing {

// A key's counts in Redis: the window index of its newest count, that count, the one before.
struct WindowState {
  uint64_t index = 0;
  uint64_t cur = 0;
  uint64_t prev = 0;
};

// The value the sync script stores for a key (cluster::kCountsSize bytes: struct.pack "<ddd").
std::string pack_counts(const WindowState& s);
std::optional<WindowState> unpack_counts(const std::string& value);

uint64_t window_weight(uint64_t elapsed_ms, uint64_t window_ms);

// The estimate at server time now_ms of a key stored as `s` (nullopt: no key).
uint64_t window_estimate(const std::optional<WindowState>& s, uint64_t now_ms, uint64_t window_ms);

// What the script leaves stored after adding delta at now_ms.
std::optional<WindowState> window_add(const std::optional<WindowState>& s, uint64_t delta,
                                      uint64_t now_ms, uint64_t window_ms);

// The smallest d >= 0 with window_estimate(s, now_ms + d) <= limit, with no further deltas.
// The estimate never rises without deltas, so a binary search finds it; `linear` tries every
// millisecond instead, to check that claim.
uint64_t window_settle_ms(const std::optional<WindowState>& s, uint64_t now_ms, uint64_t window_ms,
                          uint64_t limit, bool linear = false);

}  // namespace rl::testing
