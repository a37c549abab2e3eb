// SPDX-License-Identifier: GPL-2.0-only
// The light threshold and step (controller/cluster/light.h): what a node may leave unreported
// follows the fleet's size, stays within 3/32 of the limit, and comes off the limit Redis judges
// by; a promoted key's count is sent once a step of it is unsent; the sync writes each rule's
// threshold into the data path and follows the fleet as it grows.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include "cluster/light.h"
#include "cluster/sync/cluster_sync.h"
#include "daemon/key_state.h"
#include "fake_datapath.h"

namespace rl::cluster {
namespace {

using testing::FakeDatapath;

TEST(Light, ANodeAloneReportsFromAQuarterOfTheLimit) {
  Light l = light_for(10, 1);
  EXPECT_EQ(l.light, 3u) << "a key with at most 2 of 10 a window costs Redis nothing";
  EXPECT_EQ(l.step, 1u);
  EXPECT_EQ(l.hidden, 0u) << "a node alone reports its own light count when promoting";
}

TEST(Light, WhatTheFleetMayHideStaysWithinAFewPercent) {
  for (uint64_t amount : {1ULL, 3ULL, 10ULL, 100ULL, 1000ULL, 60'000ULL, 10'000'000ULL})
    for (uint64_t nodes : {1ULL, 2ULL, 3ULL, 10ULL, 100ULL, 1000ULL}) {
      Light l = light_for(amount, nodes);
      EXPECT_GE(l.light, 1u);
      EXPECT_LE((l.light - 1) * 4 * nodes, amount) << "light stays below a quarter of a share";
      EXPECT_GE(l.step, 1u);
      EXPECT_LE((l.step - 1) * 32 * nodes, amount) << "each node's unsent count";
      EXPECT_EQ(l.hidden,
                (nodes - 1) * std::max<uint64_t>(2 * (l.light - 1), l.step - 1) + (l.step - 1));
      EXPECT_LE(l.hidden * 32, 3 * amount) << amount << " over " << nodes << " nodes";
    }
  EXPECT_EQ(light_for(100, 3).light, 2u);
  EXPECT_EQ(light_for(3, 1).light, 1u) << "too small a limit: every key exact";
}

// A store that applies everything and reports `peers` nodes alive.
class CountingStore : public Store {
 public:
  StoreResult<SyncReply> sync(const std::vector<KeyDelta>& deltas) override {
    std::lock_guard lock(mu_);
    calls_.push_back(deltas);
    SyncReply r;
    r.server_time_ms = 1;
    return r;
  }
  StoreStatus heartbeat(const std::string&) override {
    std::lock_guard lock(mu_);
    heartbeats_++;
    return StoreStatus::Ok();
  }
  StoreResult<std::vector<Peer>> peers(std::chrono::milliseconds) override {
    std::lock_guard lock(mu_);
    peer_reads_++;
    std::vector<Peer> out;
    for (size_t i = 0; i < peers_; i++) out.push_back({"node" + std::to_string(i), 1});
    return out;
  }
  bool connected() const override { return true; }
  void set_peers(size_t n) {
    std::lock_guard lock(mu_);
    peers_ = n;
  }
  std::vector<std::vector<KeyDelta>> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }
  size_t heartbeats() const {
    std::lock_guard lock(mu_);
    return heartbeats_;
  }
  size_t peer_reads() const {
    std::lock_guard lock(mu_);
    return peer_reads_;
  }

 private:
  mutable std::mutex mu_;
  size_t peers_ = 0, heartbeats_ = 0, peer_reads_ = 0;
  std::vector<std::vector<KeyDelta>> calls_;
};

template <class Done>
bool wait_for(Done done) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!done() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return done();
}

// A cluster rule of 6,400 a minute per source, at stats slot `slot`.
SyncRule fleet_rule(uint32_t slot) {
  SyncRule rule;
  rule.name = "fleet";
  rule.compiled.id = 1;
  rule.compiled.stats_slot = slot;
  rule.compiled.key_kind = RL_KEY_SRC_ADDR;
  rule.compiled.flags = RL_RULE_F_CLUSTER;
  rule.limit = policy::ClusterLimit{{6400, 60'000'000'000ULL, policy::Unit::kPackets},
                                    policy::RedisFailure::kOpen};
  return rule;
}

TEST(SyncLight, TheThresholdFollowsTheFleetAndItsHiddenPartComesOffTheLimit) {
  FakeDatapath dp;
  const SyncRule rule = fleet_rule(7);
  rl_key busy = daemon::key_for(rule.compiled, *Address::parse("198.18.0.7"), 0);
  rl_key quiet = daemon::key_for(rule.compiled, *Address::parse("198.18.0.8"), 0);
  dp.admitted = {{busy, 150}, {quiet, 60}};
  ClusterConfig cfg;
  cfg.nodes = 2;
  cfg.interval = std::chrono::milliseconds(400);  // passes on wake() in between
  auto owned = std::make_unique<CountingStore>();
  CountingStore& store = *owned;
  ClusterSync sync(dp, std::move(owned), cfg, [&] { return std::vector<SyncRule>{rule}; });
  sync.start();
  ASSERT_TRUE(wait_for([&] { return !store.calls().empty(); }));

  // Two nodes: a light key is below min(6400 / 8, 6400 / 32) = 200 a minute, and a promoted
  // key's count is sent once 6400 / 64 = 100 of it is unsent.
  ASSERT_TRUE(dp.light.count(7));
  EXPECT_EQ(dp.light.at(7).light, 201u);
  EXPECT_EQ(dp.light.at(7).window_ns, 60'000'000'000ULL);
  auto first = store.calls().front();
  ASSERT_EQ(first.size(), 1u) << "60 unsent is below the step: the quiet key waits";
  EXPECT_EQ(first[0].key, "198.18.0.7");
  EXPECT_EQ(first[0].delta, 150u);
  // The headroom (150 admitted x 2 nodes), then what the fleet may hold unreported: the other
  // node's light count over two windows (2 x 200) or its unsent count, and this node's (99).
  EXPECT_EQ(first[0].limit, 6400u - 300 - (400 + 99));

  // (The sync thread reads dp and writes dp.light; the test touches them only between passes it
  // saw end, through the stats' mutex, and hands a change over with wake().)
  uint64_t seen = sync.stats().passes;
  dp.admitted = {{busy, 160}, {quiet, 170}};
  sync.wake();
  ASSERT_TRUE(wait_for([&] { return store.calls().size() >= 2; }));
  auto second = store.calls()[1];
  ASSERT_EQ(second.size(), 1u) << "10 more of the busy key waits in turn";
  EXPECT_EQ(second[0].key, "198.18.0.8");
  EXPECT_EQ(second[0].delta, 170u) << "all the quiet key's unsent count, at once";
  ASSERT_GE(sync.stats().passes, seen + 1);

  // Four nodes seen alive: the threshold comes down for every node's rule.
  store.set_peers(4);
  ASSERT_TRUE(wait_for([&] { return sync.stats().peers.size() == 4; }));
  seen = sync.stats().passes;
  ASSERT_TRUE(wait_for([&] { return sync.stats().passes >= seen + 2; }));
  EXPECT_EQ(dp.light.at(7).light, light_for(6400, 4).light);
  EXPECT_EQ(light_for(6400, 4).light, 67u);
}

// A threshold the kernel refused keeps the one it had: the hidden part follows the kernel's, and
// the whole headroom stays within three quarters of the limit, never past it.
TEST(SyncLight, ARefusedThresholdKeepsTheLimitAboveAQuarter) {
  class RefusingDatapath : public FakeDatapath {
   public:
    Status cluster_set_light(uint32_t slot, const rl_cluster_light& l) override {
      if (refuse) return Error{EIO, "refused"};
      return FakeDatapath::cluster_set_light(slot, l);
    }
    bool refuse = false;
  } dp;
  const SyncRule rule = fleet_rule(0);
  rl_key key = daemon::key_for(rule.compiled, *Address::parse("198.18.0.7"), 0);
  ClusterConfig cfg;  // a node alone: light 1601
  std::chrono::steady_clock::time_point sim{};
  cfg.clock = [&sim] { return sim; };
  auto owned = std::make_unique<CountingStore>();
  CountingStore& store = *owned;
  ClusterSync sync(dp, std::move(owned), cfg, [&] { return std::vector<SyncRule>{rule}; });
  sync.run_pass();
  ASSERT_EQ(dp.light.at(0).light, 1601u);
  // Four nodes seen; the kernel refuses their threshold (401) and keeps 1601.
  dp.refuse = true;
  store.set_peers(4);
  sim += std::chrono::seconds(1);
  sync.run_pass();  // the heartbeat reads the peers
  dp.admitted = {{key, 400}};
  sync.run_pass();
  EXPECT_EQ(dp.light.at(0).light, 1601u);
  EXPECT_GE(sync.stats().errors.at("datapath"), 1u);
  ASSERT_EQ(store.calls().size(), 1u);
  EXPECT_EQ(store.calls()[0][0].limit, 6400u / 4) << "3 x 1600 x 2 hidden: held to 3/4";
}

// Keys crossing their share steps by the thousand (a flood's, promoted from the light stage) each
// ask for an early sync: those come no closer than an eighth of the interval, so the flood costs
// Redis a few calls an interval rather than one per key.
TEST(SyncLight, EarlySyncsComeNoCloserThanAnEighthOfTheInterval) {
  FakeDatapath dp;
  ClusterConfig cfg;
  cfg.interval = std::chrono::milliseconds(80);
  ClusterSync sync(dp, std::make_unique<CountingStore>(), cfg,
                   [] { return std::vector<SyncRule>{}; });
  sync.start();
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(400)) {
    sync.wake();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const auto st = sync.stats();
  EXPECT_GE(st.early_syncs, 20u) << "early syncs still come, several an interval";
  EXPECT_LE(st.passes, 400u / 10 + 2) << "one every 10 ms at most";
}

// A large fleet reads its peer list less often: every max(1 s, nodes / 100 s), where the
// heartbeat stays every second. Simulated time through ClusterConfig::clock, passes by run_pass.
TEST(SyncHeartbeat, AThousandNodesReadTheirPeersEveryTenSeconds) {
  FakeDatapath dp;
  ClusterConfig cfg;
  cfg.nodes = 1000;
  std::chrono::steady_clock::time_point sim{};
  cfg.clock = [&sim] { return sim; };
  auto owned = std::make_unique<CountingStore>();
  CountingStore& store = *owned;
  ClusterSync sync(dp, std::move(owned), cfg, [] { return std::vector<SyncRule>{}; });
  for (int i = 0; i < 300; i++) {  // 30 s of 100 ms passes
    sync.run_pass();
    sim += std::chrono::milliseconds(100);
  }
  EXPECT_EQ(store.heartbeats(), 30u);
  EXPECT_EQ(store.peer_reads(), 3u);
}

}  // namespace
}  // namespace rl::cluster
