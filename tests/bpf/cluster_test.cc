// SPDX-License-Identifier: GPL-2.0-only
// Cluster rules in the kernel: admitted counts per key for rld to send, fleet over-limit entries
// that drop a key until they expire, and early-sync events when a key races through its share.
#include <algorithm>

#include "fixture.h"
#include "support/ring_records.h"

namespace rl::testing {
namespace {

class ClusterTest : public BpfTest {
 protected:
  void cluster_rule(uint64_t fleet_rate, policy::Action action = policy::Action::kDrop) {
    policy::Policy p;
    auto r = token_bucket("fleet", 1000, 1000);  // the local limit is not what is tested here
    r.cluster = policy::ClusterLimit{per_second(fleet_rate), policy::RedisFailure::kOpen};
    r.action = action;
    p.rules = {r};
    apply(p);
  }
  uint64_t admitted(const std::string& src) {
    auto all = dp_->cluster_admitted();
    EXPECT_TRUE(all.ok());
    auto want = Address::parse(src);
    for (const auto& c : all.ok() ? *all : std::vector<BpfDatapath::ClusterCount>{})
      if (std::memcmp(c.key.addr, want->bytes.data(), 4) == 0) return c.admitted;
    return 0;
  }
  rl_key key_of(const std::string& src) {
    rl_key k{};
    k.rule_id = compiled_.rules[0].id;
    k.kind = RL_KEY_SRC_ADDR;
    k.family = 4;
    std::memcpy(k.addr, Address::parse(src)->bytes.data(), 4);
    return k;
  }
  size_t sync_events() {
    auto events = drain_ring<rl_event>(dp_->events_fd());
    return static_cast<size_t>(std::count_if(events.begin(), events.end(), [](const rl_event& e) {
      return e.kind == RL_EVENT_CLUSTER_SYNC;
    }));
  }
};

TEST_F(ClusterTest, AdmittedPacketsAreCountedPerKey) {
  cluster_rule(100);
  EXPECT_TRUE(compiled_.rules[0].flags & RL_RULE_F_CLUSTER);
  EXPECT_EQ(passed(udp4("198.18.0.1"), 10), 10);
  EXPECT_EQ(passed(udp4("198.18.0.2"), 3), 3);
  EXPECT_EQ(admitted("198.18.0.1"), 10u);
  EXPECT_EQ(admitted("198.18.0.2"), 3u);
}

TEST_F(ClusterTest, OverLimitEntriesDropUntilTheyExpire) {
  cluster_rule(100);
  ASSERT_TRUE(dp_->cluster_set_over(key_of("198.18.0.1"), kT0 + kSec).ok());
  auto d = send(udp4("198.18.0.1"));
  EXPECT_EQ(d.reason, RL_REASON_CLUSTER_LIMITED);
  EXPECT_EQ(d.verdict, XDP_DROP);
  EXPECT_EQ(send(udp4("198.18.0.2")).reason, RL_REASON_ADMITTED) << "other keys are not affected";
  EXPECT_EQ(admitted("198.18.0.1"), 0u) << "cluster-limited packets are not counted as admitted";
  hooks().set_clock(kT0 + kSec);
  EXPECT_EQ(send(udp4("198.18.0.1")).reason, RL_REASON_ADMITTED) << "the entry expired by itself";
  auto live = dp_->cluster_prune_over(kT0 + kSec);
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(*live, 0u);
  EXPECT_EQ(global(RL_GC_CLUSTER_LIMITED), 1u);
}

TEST_F(ClusterTest, MonitorCountsClusterLimitedPackets) {
  cluster_rule(100, policy::Action::kMonitor);
  ASSERT_TRUE(dp_->cluster_set_over(key_of("198.18.0.1"), kT0 + kSec).ok());
  EXPECT_EQ(passed(udp4("198.18.0.1"), 5), 5);
  EXPECT_EQ(counters("fleet").monitored_pkts, 5u);
}

TEST_F(ClusterTest, EarlySyncEveryShareStep) {
  // 16/s over 1 node and 1 CPU: a quarter of the share is 4, so every 4th admit asks for a sync.
  policy::Policy p;
  auto r = token_bucket("fleet", 1000, 1000);
  r.cluster = policy::ClusterLimit{per_second(16), policy::RedisFailure::kOpen};
  p.rules = {r};
  compiler::CompileOptions o;
  o.cluster_nodes = 1;
  o.cpus = 1;
  auto c = compiler::compile(p, {}, o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->rules[0].cluster_share_mask, 3u);
  ASSERT_TRUE(dp_->apply(*c).ok());
  sync_events();  // drain
  EXPECT_EQ(passed(udp4("198.18.0.1"), 12), 12);
  EXPECT_EQ(sync_events(), 3u);
}

// The light stage: a key below its rule's light threshold costs rld and Redis nothing; once its
// estimate reaches it, the key is counted exactly from the estimate (at least its true count).
TEST_F(ClusterTest, ALightKeyIsPromotedOnceItReachesItsThreshold) {
  cluster_rule(100);
  ASSERT_TRUE(dp_->cluster_set_light(compiled_.rules[0].stats_slot, {kSec, 5, 0}).ok());
  EXPECT_EQ(passed(udp4("198.18.0.1"), 4), 4);
  EXPECT_EQ(admitted("198.18.0.1"), 0u) << "light: not in the exact map";
  EXPECT_EQ(passed(udp4("198.18.0.1"), 1), 1);
  EXPECT_EQ(admitted("198.18.0.1"), 5u) << "promoted with its whole count";
  EXPECT_EQ(passed(udp4("198.18.0.1"), 3), 3);
  EXPECT_EQ(admitted("198.18.0.1"), 8u) << "then counted exactly";
  // A new window starts the sketch's counts afresh (a window's end is rounded up to the
  // sketch's 2^20 ns units).
  const uint64_t kMs = 1'000'000;
  hooks().set_clock(kT0 + kSec + 2 * kMs);
  EXPECT_EQ(passed(udp4("198.18.0.2"), 4), 4);
  hooks().set_clock(kT0 + 2 * kSec + 2 * kMs);
  EXPECT_EQ(passed(udp4("198.18.0.2"), 4), 4);
  EXPECT_EQ(admitted("198.18.0.2"), 0u) << "four a window stays light";
}

// What an attacker's spoofed sources cost: a flood of new keys, one packet each, stays in the
// sketch, and a key near its limit keeps its exact count through it.
TEST_F(ClusterTest, AFloodOfNewKeysStaysLightAndHidesNoHeavyKey) {
  cluster_rule(100'000);
  ASSERT_TRUE(dp_->cluster_set_light(compiled_.rules[0].stats_slot, {60 * kSec, 3, 0}).ok());
  EXPECT_EQ(passed(udp4("192.0.2.7"), 50), 50);
  const int kFlood = 100'000;
  for (int i = 0; i < kFlood; i++) {
    auto r = hooks().run(udp4("198." + std::to_string(18 + (i >> 16)) + "." +
                              std::to_string(i >> 8 & 255) + "." + std::to_string(i & 255)));
    ASSERT_TRUE(r.ok());
  }
  EXPECT_EQ(passed(udp4("192.0.2.7"), 10), 10);
  auto all = dp_->cluster_admitted();
  ASSERT_TRUE(all.ok());
  EXPECT_LE(all->size(), 1u + kFlood / 100) << "the flood's keys stay light";
  EXPECT_EQ(admitted("192.0.2.7"), 60u) << "the heavy key is counted exactly";
}

// Sources that each pass the threshold are each promoted: the sketch never under-counts. It may
// over-count a key whose cells it shares with another's, which then starts at the threshold a
// packet early (rl_cluster_light_count: at most light - 1 + the packet), so a key of 3 packets
// reads 3, or up to 2 more for the few that collide.
TEST_F(ClusterTest, EveryKeyPastItsThresholdIsPromoted) {
  cluster_rule(100'000);
  ASSERT_TRUE(dp_->cluster_set_light(compiled_.rules[0].stats_slot, {60 * kSec, 3, 0}).ok());
  const int kKeys = 3'000;  // within the fixture's exact map
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < kKeys; i++)
      ASSERT_TRUE(hooks()
                      .run(udp4("198.18." + std::to_string(i >> 8) + "." + std::to_string(i & 255)))
                      .ok());
  auto all = dp_->cluster_admitted();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), static_cast<size_t>(kKeys));
  size_t over = 0;
  for (const auto& c : *all) {
    EXPECT_GE(c.admitted, 3u) << "never under-counted";
    EXPECT_LE(c.admitted, 3u + (3 - 1)) << "started at most at the threshold";
    over += c.admitted > 3;
  }
  EXPECT_LE(over, static_cast<size_t>(kKeys / 100)) << "collisions are rare";
}

}  // namespace
}  // namespace rl::testing
