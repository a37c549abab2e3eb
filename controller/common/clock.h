// SPDX-License-Identifier: GPL-2.0-only
// The kernel's clocks as the controller reads them, in ns.
#pragma once

#include <time.h>

#include <cstdint>
#include <optional>

namespace rl {

inline uint64_t timespec_ns(const timespec& ts) {
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// The kernel's tick (TICK_NSEC): CLOCK_MONOTONIC_COARSE's resolution. Both the compiler's choice
// of clock per rule and the data path's coarse clock (bpf/lib/clock.h) depend on it.
inline std::optional<uint64_t> coarse_clock_resolution_ns() {
  timespec ts{};
  if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts) != 0) return std::nullopt;
  return timespec_ns(ts);
}

}  // namespace rl
