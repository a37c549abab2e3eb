// SPDX-License-Identifier: GPL-2.0-only
// The senders' one clock: CLOCK_MONOTONIC in nanoseconds, for schedules that must not jump.
#pragma once

#include <time.h>

#include <cstdint>

namespace rl::lab {

using Nanos = int64_t;

inline Nanos now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return Nanos{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace rl::lab
