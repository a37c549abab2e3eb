// SPDX-License-Identifier: GPL-2.0-only
// Backoff on its own, with a clock the test moves.
#include "cluster/backoff.h"

#include <gtest/gtest.h>

#include <set>

namespace rl::cluster {
namespace {

using namespace std::chrono_literals;
using Clock = Backoff::Clock;

TEST(BackoffTest, DoublesFromTheStartToTheCapWithJitter) {
  for (uint64_t seed = 0; seed < 50; seed++) {
    Backoff b(100ms, 5000ms, seed);
    auto now = Clock::time_point{} + 1h;
    EXPECT_TRUE(b.ready(now));
    std::chrono::milliseconds full = 100ms;
    for (int i = 0; i < 12; i++) {
      auto wait = b.failed(now);
      EXPECT_GE(wait, full / 2) << "failure " << i;
      EXPECT_LE(wait, full) << "failure " << i;
      EXPECT_FALSE(b.ready(now));
      EXPECT_FALSE(b.ready(now + wait - 1ms));
      EXPECT_TRUE(b.ready(now + wait));
      EXPECT_EQ(b.remaining(now), wait);
      now += wait;
      full = std::min(full * 2, std::chrono::milliseconds(5000));
    }
    b.succeeded();
    EXPECT_TRUE(b.ready(now));
    EXPECT_EQ(b.failures(), 0);
    EXPECT_LE(b.failed(now), 100ms);
  }
}

TEST(BackoffTest, JitterSpreadsNodes) {
  // Nodes that failed together do not retry together.
  auto now = Clock::time_point{} + 1h;
  std::set<int64_t> waits;
  for (uint64_t seed = 0; seed < 20; seed++) {
    Backoff b(100ms, 5000ms, seed);
    for (int i = 0; i < 5; i++) b.failed(now);
    waits.insert(b.remaining(now).count());
  }
  EXPECT_GT(waits.size(), 10u);
}

}  // namespace
}  // namespace rl::cluster
