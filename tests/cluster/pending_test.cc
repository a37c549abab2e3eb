// SPDX-License-Identifier: GPL-2.0-only
// PendingDeltas on its own: no Redis.
#include "cluster/pending.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <tuple>

namespace rl::cluster {
namespace {

KeyDelta kd(const std::string& rule, const std::string& key, uint64_t delta, uint64_t limit = 10,
            uint64_t window = 1000) {
  return KeyDelta{rule, key, delta, limit, window};
}

TEST(PendingDeltasTest, SumsPerRuleAndKey) {
  PendingDeltas p;
  p.add(kd("a", "k", 1));
  p.add({kd("a", "k", 2), kd("b", "k", 5), kd("a", "j", 7)});
  p.add(kd("a", "k", 3, 20, 2000));
  EXPECT_EQ(p.size(), 3u);
  auto out = p.take();
  EXPECT_TRUE(p.empty());
  std::sort(out.begin(), out.end(), [](const KeyDelta& x, const KeyDelta& y) {
    return std::tie(x.rule, x.key) < std::tie(y.rule, y.key);
  });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].key, "j");
  EXPECT_EQ(out[0].delta, 7u);
  EXPECT_EQ(out[1].key, "k");
  EXPECT_EQ(out[1].delta, 6u);
  // The latest limit and window win (a policy reload in between).
  EXPECT_EQ(out[1].limit, 20u);
  EXPECT_EQ(out[1].window_ms, 2000u);
  EXPECT_EQ(out[2].rule, "b");
  EXPECT_EQ(out[2].delta, 5u);
}

TEST(PendingDeltasTest, RuleAndKeyDoNotRunTogether) {
  PendingDeltas p;
  p.add(kd("ab", "c", 1));
  p.add(kd("a", "bc", 1));
  EXPECT_EQ(p.size(), 2u);
}

TEST(PendingDeltasTest, NewKeysPastTheBoundAreCountedAsDropped) {
  PendingDeltas p(2);
  EXPECT_TRUE(p.add(kd("r", "1", 1)));
  EXPECT_TRUE(p.add(kd("r", "2", 2)));
  EXPECT_FALSE(p.add(kd("r", "3", 30)));
  EXPECT_FALSE(p.add(kd("r", "4", 40)));
  // Keys already pending still add up.
  EXPECT_TRUE(p.add(kd("r", "1", 5)));
  EXPECT_EQ(p.size(), 2u);
  EXPECT_EQ(p.dropped(), 2u);
  EXPECT_EQ(p.dropped_units(), 70u);
  auto out = p.take();
  EXPECT_EQ(out.size(), 2u);
  // take() frees room; the dropped count stays.
  EXPECT_TRUE(p.add(kd("r", "3", 1)));
  EXPECT_EQ(p.dropped(), 2u);
}

TEST(PendingDeltasTest, ReplayingAFailedBatchKeepsEverything) {
  PendingDeltas p;
  p.add({kd("r", "a", 1), kd("r", "b", 2)});
  auto batch = p.take();
  p.add(kd("r", "a", 10));  // the next interval, while the sync failed
  p.add(batch);             // the failed batch goes back
  auto out = p.take();
  uint64_t total = 0;
  for (const auto& d : out) total += d.delta;
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(total, 13u);
}

TEST(PendingDeltasTest, SumsSaturate) {
  PendingDeltas p;
  p.add(kd("r", "k", std::numeric_limits<uint64_t>::max() - 1));
  p.add(kd("r", "k", 5));
  EXPECT_EQ(p.take()[0].delta, std::numeric_limits<uint64_t>::max());
}

}  // namespace
}  // namespace rl::cluster
