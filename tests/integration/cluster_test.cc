// SPDX-License-Identifier: GPL-2.0-only
// Cluster-wide limits end to end on one standalone Redis: the fleet limit held, an ACL user,
// skewed clocks, and Redis lost and back.
#include <gtest/gtest.h>

#include "cluster_lab.h"

namespace rl::testing {
namespace {

TEST_F(ClusterLab, ThreeNodesHoldTheFleetLimit) {
  for (size_t i = 0; i < kNodes; i++) start_node(i, kFleetPolicy);
  constexpr double kSeconds = 10;
  auto got = flood("198.18.50.1", 300, kSeconds);
  uint64_t total = sum(got);
  std::printf(
      "fleet admitted %lu (per node %lu %lu %lu); the limit allows %.0f, local limits alone %.0f\n",
      (unsigned long)total, (unsigned long)got[0], (unsigned long)got[1], (unsigned long)got[2],
      100 * kSeconds, 3 * 100 * kSeconds);
  EXPECT_GE(total, 0.9 * 100 * kSeconds);
  EXPECT_LE(total, 1.1 * 100 * kSeconds);
  for (auto n : got) EXPECT_GT(n, 0u) << "every node admitted its part";
  Json st = ctl(0, {"cluster", "status"});
  EXPECT_TRUE(st["redis_up"].get<bool>());
  EXPECT_EQ(st["peers"].size(), kNodes);
}

// Fleets give rld an ACL user of its own. With exactly the permissions docs/cluster.md lists,
// set in rld.yaml, the fleet limit holds; a permission taken away shows in cluster status and
// the error counts by name, and the local limits keep enforcing.
TEST_F(ClusterLab, AnAclUserWithTheDocumentedPermissionsHoldsTheFleetLimit) {
  const std::string password = "fleet-acl-" + lab_->tag();
  auto acl = documented_acl(password);
  ASSERT_FALSE(acl.empty()) << "docs/cluster.md has no ACL SETUSER line";
  auto made = redis_->command(acl);
  ASSERT_TRUE(made.ok() && !made->is_error()) << (made.ok() ? made->str : made.error().str());
  const fs::path config = dir_ / "rld.yaml";
  std::ofstream(config) << "cluster:\n  redis_user: rld\n  redis_password: " << password << "\n";
  fs::permissions(config, fs::perms::owner_read | fs::perms::owner_write);
  node_args_ = {"--config", config.string()};
  for (size_t i = 0; i < kNodes; i++) start_node(i, kFleetPolicy);

  constexpr double kSeconds = 5;
  auto got = flood("198.18.51.1", 300, kSeconds);
  const uint64_t total = sum(got);
  std::printf("fleet admitted %lu as ACL user rld; the limit allows %.0f\n", (unsigned long)total,
              kLimit * kSeconds);
  EXPECT_GE(total, 0.9 * kLimit * kSeconds);
  EXPECT_LE(total, fleet_bound(kSeconds, kSeconds));
  Json st = ctl(0, {"cluster", "status"});
  EXPECT_TRUE(st["redis_up"].get<bool>()) << st.dump();
  EXPECT_EQ(st["last_error"], "") << st.dump();
  EXPECT_EQ(st["peers"].size(), kNodes) << "heartbeats and peers as the ACL user";

  // The user loses +zadd (the heartbeat script's): named within a few heartbeats.
  auto revoked = redis_->command({"ACL", "SETUSER", "rld", "-zadd"});
  ASSERT_TRUE(revoked.ok() && !revoked->is_error());
  Json named;
  for (int i = 0; i < 100; i++) {
    named = ctl(0, {"cluster", "status"});
    if (named["last_error"].get<std::string>().find("'zadd'") != std::string::npos) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_NE(named["last_error"].get<std::string>().find("NOPERM"), std::string::npos)
      << named.dump();
  EXPECT_NE(named["last_error"].get<std::string>().find("'zadd'"), std::string::npos)
      << named.dump();
  // Counted as the permission it lacks, as a sync's would be, not as a heartbeat failure.
  EXPECT_GT(named["errors"].value("permission", 0), 0) << named.dump();
  EXPECT_EQ(named["errors"].value("heartbeat", 0), 0) << named.dump();
}

// Nodes whose clocks differ by seconds still share windows: windows follow Redis's clock, and
// each node's kernel entries follow its own kernel clock.
TEST_F(ClusterLab, SkewedNodeClocksStillShareWindows) {
  start_node(0, kFleetPolicy, 0);
  start_node(1, kFleetPolicy, 7);
  start_node(2, kFleetPolicy, -3);
  constexpr double kSeconds = 6;
  auto got = flood("198.18.51.1", 300, kSeconds);
  uint64_t total = sum(got);
  std::printf(
      "fleet admitted %lu (per node %lu %lu %lu) with node clocks skewed by 0, +7 and -3 s\n",
      (unsigned long)total, (unsigned long)got[0], (unsigned long)got[1], (unsigned long)got[2]);
  EXPECT_GE(total, 0.9 * 100 * kSeconds);
  EXPECT_LE(total, 1.1 * 100 * kSeconds);
  // Equal traffic to every node: a node whose clock misjudged its blocks would starve or flood.
  for (auto n : got) {
    EXPECT_GE(n, total / 5);
    EXPECT_LE(n, total / 2);
  }
}

// Redis killed mid-run: each node keeps its local limit (on_redis_failure: open), keeps its
// deltas, and sends them when Redis is back; nothing crashes or hangs.
TEST_F(ClusterLab, RedisOutageKeepsLocalLimitsAndReplaysDeltas) {
  for (size_t i = 0; i < kNodes; i++) start_node(i, kFleetPolicy);
  auto first = sum(flood("198.18.52.1", 300, 2));
  EXPECT_LE(first, fleet_bound(2, 1)) << "a fresh key overshoots once, by the bound";

  redis_->kill();
  auto during = flood("198.18.52.2", 300, 2);
  // Open: each node enforces only its local 100/s, so the fleet admits up to three times more.
  EXPECT_GE(sum(during), 0.8 * 3 * 100 * 2);
  EXPECT_LE(sum(during), 1.1 * 3 * 100 * 2 + 30);
  Json st = ctl(0, {"cluster", "status"});
  EXPECT_FALSE(st["redis_up"].get<bool>());
  EXPECT_GT(st["pending_keys"].get<uint64_t>(), 0u) << "deltas are kept while Redis is away";
  EXPECT_TRUE(ctl(0, {"status"}).contains("interfaces")) << "rld still answers";

  ASSERT_TRUE(redis_->restart().ok());
  bool drained = false;
  for (int i = 0; i < 100 && !drained; i++) {  // at most 10 s: backoff tops out at 5 s
    std::this_thread::sleep_for(100ms);
    drained = true;
    for (size_t n = 0; n < kNodes; n++) {
      Json s = ctl(n, {"cluster", "status"});
      drained = drained && s["redis_up"].get<bool>() && s["pending_keys"].get<uint64_t>() == 0;
    }
  }
  EXPECT_TRUE(drained) << "every node reconnected and replayed its deltas";
  // The replayed deltas arrived: Redis counts what the fleet admitted during the outage.
  // The rule's hash (docs/cluster.md, "Keys"): the source is a field of it.
  auto has = redis_->command({"HEXISTS", "rl:{fleet}:1000", "198.18.52.2"});
  ASSERT_TRUE(has.ok());
  EXPECT_EQ(has->integer, 1);
}

}  // namespace
}  // namespace rl::testing

namespace rl::testing {
namespace {

// on_redis_failure: closed. Without Redis each node holds the key to limit/N per window (N the
// nodes seen alive), so the fleet stays near its limit rather than at N times it.
TEST_F(ClusterLab, ClosedRulesFallBackToTheirShareWhenRedisIsDown) {
  std::string policy = kFleetPolicy;
  policy.replace(policy.find("on_redis_failure: open"), 22, "on_redis_failure: closed");
  for (size_t i = 0; i < kNodes; i++) start_node(i, policy);
  // Every node sees the others in Redis before it goes away.
  for (size_t i = 0; i < kNodes; i++)
    EXPECT_TRUE(wait_for(10s,
                         [&] {
                           return ctl(i, {"cluster", "status"})["peers"].size() == kNodes;
                         }))
        << "node " << i << ": " << ctl(i, {"cluster", "status"}).dump();
  redis_->kill();
  constexpr double kSeconds = 4;
  auto got = flood("198.18.53.1", 300, kSeconds);
  uint64_t total = sum(got);
  std::printf("fleet admitted %lu (per node %lu %lu %lu) with Redis down, closed rule\n",
              (unsigned long)total, (unsigned long)got[0], (unsigned long)got[1],
              (unsigned long)got[2]);
  // Each node: 100/3 per 1 s window, plus what it admits before its local block lands, in every
  // window (it has no fleet view to carry over).
  EXPECT_LE(total, fleet_bound(kSeconds, kSeconds));
  EXPECT_GE(total, 0.75 * kLimit * kSeconds);
}

}  // namespace
}  // namespace rl::testing
