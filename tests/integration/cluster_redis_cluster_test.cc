// SPDX-License-Identifier: GPL-2.0-only
// Cluster-wide limits on a Redis Cluster, end to end: three masters and three replicas run in
// the lab's client namespace on its address 192.0.2.1, joined by `redis-cli --cluster create`,
// and three rld nodes configured by rld.yaml alone (redis_cluster_nodes: one seed) learn the
// slots from it. The fleet limit is measured before, during and after a master's death and a
// slot's migration.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cluster/slots.h"
#include "cluster/sync_batch.h"
#include "cluster_lab.h"
#include "redis_cluster.h"

namespace rl::testing {
namespace {

using Clock = std::chrono::steady_clock;

class RedisClusterLab : public ClusterLab {
 protected:
  RedisClusterLab() : ClusterLab(/*local_redis=*/false) {}

  void SetUp() override {
    ClusterLab::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_FALSE(RedisCluster::cli().empty()) << "redis-cli is required";
    host_ = estate_host();
    if (HasFailure()) return;
    auto c = RedisCluster::start({.host = host_, .netns = lab_->client_ns()});
    ASSERT_TRUE(c) << c.error().str();
    cluster_ = std::move(*c);
    use_config("  redis_cluster_nodes: [" + cluster_->address(*cluster_->nodes().front()) + "]\n");
  }

  void TearDown() override {
    ClusterLab::TearDown();  // the nodes first, then the estate
    cluster_.reset();
  }

  // The slot of the fleet rule's hash for a source's key.
  static uint16_t slot_of(const std::string& src) {
    const auto& tags = cluster::spread_tags(cluster::kClusterSpread);
    return cluster::key_slot(cluster::spread_hash(
        "rl", tags[cluster::spread_bucket(src, cluster::kClusterSpread)], "fleet", 1000));
  }

  // Every node knowing `addr` as one of the cluster's masters and, with `synced`, its last
  // call there answered.
  bool every_node_on(const std::string& addr, bool synced = true) {
    for (size_t i = 0; i < kNodes; i++) {
      Json st = ctl(i, {"cluster", "status"});
      bool found = false;
      for (const auto& s : st.value("servers", Json::array()))
        found |= s.value("addr", std::string()) == addr && (!synced || s.value("up", false));
      if (!found) return false;
    }
    return true;
  }

  uint64_t redirects(const char* kind) {
    uint64_t n = 0;
    for (size_t i = 0; i < kNodes; i++)
      for (const auto& s : ctl(i, {"cluster", "status"}).value("servers", Json::array()))
        n += s.value(kind, uint64_t{0});
    return n;
  }

  // Floods `src` for `seconds` while `fault` runs one second in and returns the master that
  // serves `src`'s slot afterwards; `outage` is the time from the fault until every node
  // synced with that master.
  template <typename Fault>
  uint64_t flood_through(const std::string& src, double seconds, Fault fault, double& outage) {
    std::atomic<double> measured{-1};
    std::thread faulty([&] {
      std::this_thread::sleep_for(1s);
      const auto start = Clock::now();
      RedisServer* now = fault();
      if (now && wait_for(20s, [&] { return every_node_on(cluster_->address(*now)); }))
        measured = std::chrono::duration<double>(Clock::now() - start).count();
    });
    const uint64_t total = sum(flood(src, 300, seconds));
    faulty.join();
    outage = measured;
    return total;
  }

  std::string host_;
  std::unique_ptr<RedisCluster> cluster_;
};

// The master of the flooded key's slot dies. Until its replica takes over, the key's deltas
// wait on every node and it is judged as with Redis down (on_redis_failure: open), so the
// bound is Sentinel's (docs/cluster.md, "Redis Cluster"): the fleet limit's own, plus each
// node's local rate for the outage and one sync interval.
TEST_F(RedisClusterLab, AMastersDeathIsSurvivedAndTheFleetLimitHolds) {
  const std::string net = "198.18.56";
  for (size_t i = 0; i < kNodes; i++) start_node(i, kFleetPolicy);
  RedisServer* doomed = cluster_->master_of(slot_of(net + ".2"));
  ASSERT_NE(doomed, nullptr);
  ASSERT_TRUE(wait_for(10s, [&] { return every_node_on(cluster_->address(*doomed), false); }))
      << ctl(0, {"cluster", "status"}).dump();
  expect_fleet_limit(net + ".1", "before the master's death");

  constexpr double kSeconds = 8;
  double outage = -1;
  const uint64_t during = flood_through(
      net + ".2", kSeconds,
      [&]() -> RedisServer* {
        doomed->kill();
        RedisServer* promoted = nullptr;
        wait_for(20s, [&] { return (promoted = cluster_->master_of(slot_of(net + ".2"))); });
        return promoted;
      },
      outage);
  const double bound = fleet_bound(kSeconds, kSeconds) + kNodes * kLocalRate * (outage + kInterval);
  std::printf(
      "fleet admitted %lu through a master's death; every node on the promoted replica "
      "%.1f s after it; bound %.0f\n",
      (unsigned long)during, outage, bound);
  ASSERT_GE(outage, 0) << "the nodes never all synced with the promoted replica";
  EXPECT_LE(outage, 15);
  EXPECT_LE(during, bound);
  EXPECT_GE(during, 0.9 * kLimit * kSeconds);

  expect_fleet_limit(net + ".3", "after the master's death");
  for (size_t i = 0; i < kNodes; i++) {
    Json st = ctl(i, {"cluster", "status"});
    EXPECT_TRUE(st.value("redis_up", false)) << st.dump();
    EXPECT_EQ(st.value("topology", std::string()), "cluster") << st.dump();
    EXPECT_GE(st.value("masters_changed", 0), 1) << st.dump();
    EXPECT_EQ(st["servers"].size(), 3u) << st.dump();
    EXPECT_EQ(st["peers"].size(), kNodes) << st.dump();
  }
}

// The flooded key's slot moves to another master mid-flood: the nodes follow ASK while its
// keys move and MOVED once it is reassigned, and the fleet limit holds with no outage at all.
TEST_F(RedisClusterLab, ASlotMigratedMidFloodKeepsTheFleetLimit) {
  const std::string src = "198.18.57.2";
  for (size_t i = 0; i < kNodes; i++) start_node(i, kFleetPolicy);
  const uint16_t slot = slot_of(src);
  RedisServer* from = cluster_->master_of(slot);
  RedisServer* to = cluster_->master_of((slot + 8192) % cluster::kSlots);
  ASSERT_TRUE(from && to && from != to);
  ASSERT_TRUE(wait_for(10s, [&] { return every_node_on(cluster_->address(*from), false); }));

  constexpr double kSeconds = 6;
  double outage = -1;
  const uint64_t during = flood_through(
      src, kSeconds,
      [&]() -> RedisServer* {
        Status moved = cluster_->migrate_slot(slot, *to);
        EXPECT_TRUE(moved) << moved.error().str();
        return to;
      },
      outage);
  std::printf(
      "fleet admitted %lu through a slot's migration; the limit allows %.0f, bound %.0f; "
      "%lu MOVED followed\n",
      (unsigned long)during, kLimit * kSeconds, fleet_bound(kSeconds, kSeconds),
      (unsigned long)redirects("moved"));
  EXPECT_GE(outage, 0);
  EXPECT_LE(during, fleet_bound(kSeconds, kSeconds));
  EXPECT_GE(during, 0.9 * kLimit * kSeconds);
  EXPECT_GE(redirects("moved"), 1u) << "each node met MOVED once the slot moved";
  EXPECT_EQ(cluster_->master_of(slot), to);
}

}  // namespace
}  // namespace rl::testing
