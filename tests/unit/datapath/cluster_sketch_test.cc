// SPDX-License-Identifier: GPL-2.0-only
// The light stage's sketch (abi/rl_cluster_sketch.h), the code the XDP program runs, over
// buckets the test owns: it never under-counts a key, keeps a window's counts until every window
// counted in a bucket has ended, and leaves a flood of one-packet keys light.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <unordered_map>
#include <vector>

#include "rl_abi.h"
#include "rl_hash.h"

namespace rl {
namespace {

constexpr uint64_t kSec = 1'000'000'000ULL;
constexpr uint64_t kT0 = 1000 * kSec;

class Sketch {
 public:
  Sketch() : buckets_(RL_SKETCH_BUCKETS) {}
  // The key's estimate after `units` more at now, as the data path takes it.
  uint32_t add(uint64_t key, uint64_t now, uint64_t window, uint32_t units = 1) {
    uint64_t h = rl_mix64(key);
    return rl_sketch_add(&buckets_[rl_sketch_bucket_of(h)], h, now, window, units);
  }
  rl_sketch_bucket& bucket_of(uint64_t key) { return buckets_[rl_sketch_bucket_of(rl_mix64(key))]; }

 private:
  std::vector<rl_sketch_bucket> buckets_;
};

TEST(ClusterSketch, NeverBelowAKeysCountInItsWindow) {
  Sketch s;
  std::mt19937_64 rng(7);
  // More keys than buckets, with skewed counts: every estimate is checked.
  std::unordered_map<uint64_t, uint64_t> truth;
  for (int i = 0; i < 600'000; i++) {
    uint64_t key = rng() % 1'000'000;
    if (key % 7 == 0) key %= 100;  // a few heavy keys
    uint32_t units = 1 + rng() % 3;
    uint64_t& t = truth[key];
    t += units;
    uint32_t est = s.add(key, kT0, 60 * kSec, units);
    ASSERT_GE(est, t) << "key " << key;
  }
}

TEST(ClusterSketch, AFloodOfOnePacketKeysStaysLight) {
  Sketch s;
  const int kKeys = 1 << 20;
  int promoted = 0;
  for (int i = 0; i < kKeys; i++)
    promoted += s.add(0x2001'0db8'0000'0000ULL + i, kT0, 60 * kSec) >= 3;
  // The fraction the kernel measured alike (docs/cluster.md, "The light stage").
  std::printf("%d of %d one-packet keys promoted\n", promoted, kKeys);
  EXPECT_LT(promoted, kKeys / 20);
}

TEST(ClusterSketch, AWindowsCountsLastUntilItEnds) {
  Sketch s;
  EXPECT_EQ(s.add(1, kT0, kSec, 4), 4u);
  EXPECT_EQ(s.add(1, kT0 + kSec / 2, kSec), 5u);
  // 2 ms past the window's end (until is rounded up to 2^20 ns): a fresh count.
  EXPECT_EQ(s.add(1, kT0 + kSec + 2'000'000, kSec), 1u);
}

TEST(ClusterSketch, AShortWindowNeverEndsALongerOnesCounts) {
  // Two keys of one bucket with cells of their own: one of a rule with a minute's window, one of
  // a rule with a second's.
  std::vector<rl_sketch_bucket> one(1);
  rl_sketch_bucket& b = one[0];
  uint64_t minute = rl_mix64(1), second = minute ^ (1ULL << 47) ^ (1ULL << 63);
  uint32_t m0, m1, s0, s1;
  rl_sketch_cells_of(minute, &m0, &m1);
  rl_sketch_cells_of(second, &s0, &s1);
  ASSERT_TRUE(m0 != s0 && m0 != s1 && m1 != s0 && m1 != s1);
  EXPECT_EQ(rl_sketch_add(&b, minute, kT0, 60 * kSec, 5), 5u);
  EXPECT_EQ(rl_sketch_add(&b, second, kT0, kSec, 1), 1u);
  EXPECT_EQ(rl_sketch_add(&b, second, kT0 + 3 * kSec, kSec, 1), 2u)
      << "the bucket holds a minute's window: no reset, so the second's key is over-estimated";
  EXPECT_EQ(rl_sketch_add(&b, minute, kT0 + 3 * kSec, 60 * kSec, 1), 6u) << "the minute's kept";
  // Once the minute has ended too, the bucket starts afresh.
  EXPECT_EQ(rl_sketch_add(&b, minute, kT0 + 61 * kSec, 60 * kSec, 1), 1u);
}

TEST(ClusterSketch, ABucketAnotherCpuHoldsIsCountedExactly) {
  Sketch s;
  s.add(9, kT0, kSec);
  rl_sketch_bucket& b = s.bucket_of(9);
  uint32_t until = b.until;
  b.until = RL_SKETCH_RESETTING;
  EXPECT_EQ(s.add(9, kT0, kSec), 0u) << "0: the caller counts the packet exactly";
  b.until = until;
  EXPECT_EQ(s.add(9, kT0, kSec), 2u);
}

TEST(ClusterSketch, SaturatedCellsStaySaturated) {
  Sketch s;
  EXPECT_EQ(s.add(5, kT0, kSec, RL_SKETCH_SATURATED), RL_SKETCH_SATURATED);
  EXPECT_EQ(s.add(5, kT0, kSec, RL_SKETCH_SATURATED), RL_SKETCH_SATURATED)
      << "never added to again, so never wraps";
}

}  // namespace
}  // namespace rl
