// SPDX-License-Identifier: GPL-2.0-only
// The heavy-hitter table behind `rlctl top --by traffic` (Space-Saving) and its two epochs:
// exact counts on crafted streams, the capacity bound and its guarantees, O(1) work per
// sample, and what an epoch change forgets.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "daemon/traffic/heavy_hitters.h"
#include "daemon/traffic/traffic.h"

namespace rl::daemon {
namespace {

rl_key key(uint32_t n, uint32_t rule = 7) {
  rl_key k{};
  k.rule_id = rule;
  k.family = 4;
  k.kind = RL_KEY_SRC_ADDR;
  k.addr[0] = n;
  return k;
}

TEST(HeavyHitters, ExactWhileTheKeysFit) {
  HeavyHitters t(4, 1);
  // a:5, b:3, c:1, interleaved.
  for (uint32_t n : {1, 2, 1, 3, 1, 2, 1, 2, 1}) t.add(key(n), 100 * n, n == 2);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.total(), 9u);
  EXPECT_EQ(t.total_bytes(), 5u * 100 + 3 * 200 + 300);
  EXPECT_EQ(t.min_count(), 0u) << "not full: a key not held sent nothing";
  ASSERT_NE(t.find(key(1)), nullptr);
  EXPECT_EQ(t.find(key(1))->count, 5u);
  EXPECT_EQ(t.find(key(1))->error, 0u);
  EXPECT_EQ(t.find(key(1))->bytes, 500u);
  EXPECT_EQ(t.find(key(2))->count, 3u);
  EXPECT_EQ(t.find(key(2))->dropped, 3u);
  EXPECT_EQ(t.find(key(3))->count, 1u);
  EXPECT_EQ(t.find(key(9)), nullptr);
  EXPECT_EQ(t.find(key(1, 8)), nullptr) << "another rule's key is another key";
}

TEST(HeavyHitters, ANewKeyTakesTheLowestCountAndInheritsIt) {
  HeavyHitters t(2, 1);
  for (int i = 0; i < 3; i++) t.add(key(1), 10, false);  // a:3
  t.add(key(2), 10, false);                              // b:1
  t.add(key(3), 20, true);  // full: c replaces b (count 1) and starts at 2, error 1
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.find(key(2)), nullptr);
  const auto* c = t.find(key(3));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->count, 2u);
  EXPECT_EQ(c->error, 1u);
  EXPECT_EQ(c->bytes, 20u) << "bytes count from when the key entered";
  EXPECT_EQ(c->dropped, 1u);
  EXPECT_EQ(t.min_count(), 2u);
  t.add(key(2), 10, false);  // b comes back: replaces c (2), starts at 3, error 2
  EXPECT_EQ(t.find(key(3)), nullptr);
  EXPECT_EQ(t.find(key(2))->count, 3u);
  EXPECT_EQ(t.find(key(2))->error, 2u);
  EXPECT_EQ(t.find(key(1))->count, 3u) << "a is never displaced: it had the most";
  EXPECT_EQ(t.total(), 6u);
}

// The Space-Saving guarantees on a skewed random stream many times the capacity: every held
// key's count is an over-estimate by at most its error, errors are at most N / m, and every key
// with more than N / m samples is held.
TEST(HeavyHitters, GuaranteesHoldOnASkewedStream) {
  const uint32_t m = 64;
  HeavyHitters t(m, 42);
  std::mt19937 rng(3);
  std::map<uint32_t, uint64_t> truth;
  const uint64_t n = 200'000;
  for (uint64_t i = 0; i < n; i++) {
    // 8 heavy keys take half the stream, 20,000 others the rest.
    uint32_t k = rng() % 2 ? rng() % 8 : 100 + rng() % 20'000;
    truth[k]++;
    t.add(key(k), 64, false);
    ASSERT_LE(t.size(), m);
  }
  EXPECT_EQ(t.size(), m);
  EXPECT_LE(t.min_count(), n / m);
  size_t held = 0;
  t.for_each([&](const HeavyHitters::Entry& e) {
    held++;
    uint64_t real = truth[e.key.addr[0]];
    EXPECT_GE(e.count, real);
    EXPECT_LE(e.count - e.error, real);
    EXPECT_LE(e.error, t.min_count());
  });
  EXPECT_EQ(held, m);
  for (const auto& [k, c] : truth)
    if (c > n / m) {
      EXPECT_NE(t.find(key(k)), nullptr) << k << " sent " << c;
    }
  for (uint32_t k = 0; k < 8; k++) EXPECT_NE(t.find(key(k)), nullptr);
}

// A flood of keys that never repeat: the work per sample stays flat (a few index cells), and
// the table never holds more than its capacity.
TEST(HeavyHitters, CostPerSampleStaysFlat) {
  HeavyHitters t(4096, 9);
  for (uint32_t i = 0; i < 4096; i++) t.add(key(i), 60, true);
  // Each new key: a miss, the displaced entry's cell, the shift behind it and the new cell.
  auto cells_per_sample = [&](uint32_t from, uint32_t n) {
    uint64_t before = t.probes();
    for (uint32_t i = 0; i < n; i++) t.add(key(from + i), 60, true);
    return double(t.probes() - before) / n;
  };
  double first = cells_per_sample(1'000'000, 100'000);
  cells_per_sample(2'000'000, 800'000);
  double last = cells_per_sample(3'000'000, 100'000);
  EXPECT_EQ(t.size(), 4096u);
  EXPECT_LT(first, 16.0) << "index cells per sample";
  EXPECT_LT(last, first * 1.2) << "the index does not degrade as keys come and go";
  EXPECT_EQ(t.total(), 4096u + 1'000'000);
}

// docs/operations.md states the memory: 112 bytes per key, two tables of TrafficLog::kCapacity.
TEST(HeavyHitters, MemoryIsWhatTheDocsSay) {
  EXPECT_EQ(HeavyHitters::kBytesPerEntry, 112u);
  EXPECT_EQ(TrafficLog::kCapacity, 4096u);
}

TEST(HeavyHitters, ClearForgetsEverything) {
  HeavyHitters t(2, 1);
  for (uint32_t n : {1, 2, 3, 1}) t.add(key(n), 1, false);
  t.clear();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.total(), 0u);
  EXPECT_EQ(t.min_count(), 0u);
  EXPECT_EQ(t.find(key(1)), nullptr);
  t.add(key(5), 1, false);
  EXPECT_EQ(t.find(key(5))->count, 1u);
  EXPECT_EQ(t.find(key(5))->error, 0u);
}

using Clock = TrafficWindows::Clock;
const auto kEpoch = std::chrono::seconds(10);
auto all = [](uint32_t) { return true; };

TEST(TrafficWindows, TwoEpochsAddUpThenTheOlderOneIsForgotten) {
  Clock::time_point t0{};
  TrafficWindows w(16, kEpoch, t0, 5);
  for (int i = 0; i < 30; i++) w.add(key(1), 100, false);
  for (int i = 0; i < 10; i++) w.add(key(2), 1000, i < 5);
  auto v = w.top(t0 + std::chrono::seconds(5), 10, all);
  ASSERT_EQ(v.keys.size(), 2u);
  EXPECT_EQ(v.keys[0].key.addr[0], 1u) << "most samples first";
  EXPECT_EQ(v.keys[0].samples, 30u);
  EXPECT_EQ(v.keys[1].samples, 10u);
  EXPECT_DOUBLE_EQ(v.keys[1].sampled_bytes, 10'000);
  EXPECT_DOUBLE_EQ(v.keys[1].dropped, 5);
  EXPECT_EQ(v.samples, 40u);
  EXPECT_DOUBLE_EQ(v.seconds, 5);

  // The next epoch: the first one is still counted, over both epochs' time.
  w.advance(t0 + std::chrono::seconds(12));
  for (int i = 0; i < 50; i++) w.add(key(2), 1000, false);
  v = w.top(t0 + std::chrono::seconds(12), 10, all);
  ASSERT_EQ(v.keys.size(), 2u);
  EXPECT_EQ(v.keys[0].key.addr[0], 2u);
  EXPECT_EQ(v.keys[0].samples, 60u);
  EXPECT_EQ(v.keys[1].samples, 30u);
  EXPECT_EQ(v.samples, 90u);
  EXPECT_DOUBLE_EQ(v.seconds, 12);

  // One more: the first epoch is gone.
  w.advance(t0 + std::chrono::seconds(21));
  v = w.top(t0 + std::chrono::seconds(21), 10, all);
  ASSERT_EQ(v.keys.size(), 1u);
  EXPECT_EQ(v.keys[0].key.addr[0], 2u);
  EXPECT_EQ(v.keys[0].samples, 50u);
  EXPECT_DOUBLE_EQ(v.seconds, 11);

  // Quiet for longer than two epochs: nothing is left.
  w.advance(t0 + std::chrono::seconds(45));
  v = w.top(t0 + std::chrono::seconds(45), 10, all);
  EXPECT_TRUE(v.keys.empty());
  EXPECT_EQ(v.samples, 0u);
  EXPECT_DOUBLE_EQ(v.seconds, 15);
}

TEST(TrafficWindows, FiltersByRuleAndLimitsTheCount) {
  Clock::time_point t0{};
  TrafficWindows w(16, kEpoch, t0, 5);
  for (uint32_t n = 1; n <= 5; n++)
    for (uint32_t i = 0; i < n; i++) w.add(key(n, n % 2 ? 7 : 8), 60, false);
  auto v = w.top(t0 + std::chrono::seconds(1), 2, [](uint32_t rule) { return rule == 7; });
  ASSERT_EQ(v.keys.size(), 2u);
  EXPECT_EQ(v.keys[0].key.addr[0], 5u);
  EXPECT_EQ(v.keys[1].key.addr[0], 3u);
  EXPECT_EQ(v.samples, 15u) << "the share is of every sample";
}

// A key one epoch's table dropped is credited with at most that table's lowest count: the
// error covers what it may have sent then.
TEST(TrafficWindows, ErrorCoversAnEpochThatDidNotHoldTheKey) {
  Clock::time_point t0{};
  TrafficWindows w(2, kEpoch, t0, 5);
  for (int i = 0; i < 4; i++) w.add(key(1), 60, false);
  for (int i = 0; i < 3; i++) w.add(key(2), 60, false);
  w.advance(t0 + kEpoch);
  w.add(key(3), 60, false);
  auto v = w.top(t0 + kEpoch, 10, all);
  ASSERT_EQ(v.keys.size(), 3u);
  EXPECT_EQ(v.keys.back().key.addr[0], 3u);
  EXPECT_EQ(v.keys.back().samples, 1u);
  EXPECT_EQ(v.keys.back().error, 3u) << "the previous table was full with lowest count 3";
  EXPECT_EQ(v.table_error, 3u);
}

}  // namespace
}  // namespace rl::daemon
