// SPDX-License-Identifier: GPL-2.0-only
// The sliding log's state word (abi/rl_limiter_state.h) against a plain list of admission ticks,
// over random arrivals: the word must admit exactly what the list admits.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>

#include "rl_limiter_state.h"

namespace {

struct Log {
  uint64_t n, ticks;
  std::deque<uint64_t> entries;  // oldest first, each admission's tick rounded up

  bool room(uint64_t floor_tick) const {
    return entries.size() < n ||
           static_cast<int64_t>(floor_tick - entries.front()) >= static_cast<int64_t>(ticks);
  }
  void add(uint64_t ceil_tick) {
    entries.push_back(entries.empty() ? ceil_tick : std::max(ceil_tick, entries.back()));
    if (entries.size() > n) entries.pop_front();
  }
};

TEST(SlidingLogState, AdmitsExactlyWhatAListOfTicksAdmits) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; trial++) {
    const uint64_t n = 1 + rng() % RL_SL_MAX_ENTRIES;
    const uint64_t window_ns = rng() % 2 ? 1'000'000'000 : 100'000'000;
    unsigned shift = 0;
    while (rl_sl_ticks(window_ns, shift) > rl_sl_max_ticks(n)) shift++;
    Log log{n, rl_sl_ticks(window_ns, shift), {}};
    uint64_t st = 0, now = 1'000'000'000'000 + rng() % 1'000'000'000;
    uint64_t admitted = 0;
    for (int i = 0; i < 400; i++) {
      // Bursts within one tick, steps of a few ms, and now and then a long pause.
      uint64_t r = rng() % 32;
      now += r == 0 ? rng() % 300'000'000 : r < 8 ? 0 : rng() % 4'000'000;
      uint64_t floor_tick = now >> shift, ceil_tick = rl_sl_ticks(now, shift);
      bool want = log.room(floor_tick);
      ASSERT_EQ(rl_sl_room(st, n, log.ticks, floor_tick) != 0, want)
          << "trial " << trial << " packet " << i << ", n " << n;
      if (!want) continue;
      st = rl_sl_add(st, n, log.ticks, ceil_tick);
      log.add(ceil_tick);
      admitted++;
      ASSERT_EQ(rl_sl_count(st), log.entries.size());
      ASSERT_EQ(rl_sl_in_window(st, n, log.ticks, floor_tick),
                static_cast<uint64_t>(
                    std::count_if(log.entries.begin(), log.entries.end(), [&](uint64_t t) {
                      return static_cast<int64_t>(floor_tick - t) < static_cast<int64_t>(log.ticks);
                    })));
    }
    ASSERT_GT(admitted, 0u);
  }
}

// Bit 63 is the block's; every word the log writes leaves it clear.
TEST(SlidingLogState, LeavesTheBlockBitClear) {
  for (uint64_t n = 1; n <= RL_SL_MAX_ENTRIES; n++) {
    uint64_t st = 0, ticks = rl_sl_max_ticks(n);
    for (uint64_t t = 0; t < 3 * n; t++) st = rl_sl_add(st, n, ticks, RL_SL_TICK_MASK - 1 + t);
    EXPECT_EQ(st & RL_STATE_BLOCKED, 0u) << "n " << n;
    EXPECT_EQ(rl_sl_count(st), n);
  }
}

}  // namespace
