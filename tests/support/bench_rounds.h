// SPDX-License-Identifier: GPL-2.0-only
// How many rounds a benchmark-like test measures. Run by hand, as docs/benchmarks.md gives the
// command, it measures all of them for the recorded figures; ctest sets RL_BENCH_ROUNDS in its
// environment to a few, enough to show it runs and its assertions hold.
#pragma once

#include <algorithm>
#include <cstdlib>

namespace rl::testing {

inline int bench_rounds(int full) {
  const char* env = std::getenv("RL_BENCH_ROUNDS");
  const int n = env != nullptr ? std::atoi(env) : 0;
  return n > 0 ? std::min(n, full) : full;
}

}  // namespace rl::testing
