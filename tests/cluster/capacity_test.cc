// SPDX-License-Identifier: GPL-2.0-only
// The benchmark behind docs/cluster.md, "Redis Cluster: capacity": one node's steady sync of
// 100,000 active keys on Redis Clusters of 1, 2, 3 and 4 masters. What bounds a fleet is the
// busiest master's time per sync, so it prints, per cluster, the keys and the Redis time each
// master had, and the keys a sync interval can carry at that rate. The only assertions are
// that every master gets its share in one round trip and that the shares are even.
//   ctest --test-dir build -R cluster.RedisClusterCapacity --verbose
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "busy_node.h"
#include "cluster/cluster_store.h"
#include "redis_cluster.h"
#include "redis_test.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

void measure(size_t masters) {
  auto c = RedisCluster::start({.masters = masters, .replicas = 0});
  ASSERT_TRUE(c) << c.error().str();
  cluster::RedisOptions o;
  o.cluster_nodes = (*c)->seeds();
  o.command_timeout = 10s;
  auto store = cluster::ClusterStore::create(o);
  ASSERT_TRUE(store) << store.error().str();
  std::vector<cluster::KeyDelta> deltas;
  deltas.reserve(kBusyKeys);
  for (int i = 0; i < kBusyKeys; i++)
    deltas.push_back(key_delta("rule", busy_key(i), busy_delta(i), busy_limit(i), 3'600'000));
  // The first sync inserts every key; the measured ones find them, as a node's syncs do.
  ASSERT_TRUE((*store)->sync(deltas));
  // CPU time, not EVALSHA's wall time: on a host with fewer cores than masters, the masters
  // preempt one another and wall time would count the waits.
  std::map<uint16_t, double> cpu_before, cpu;
  std::map<uint16_t, uint64_t> keys;
  std::vector<int64_t> wall_ms;
  constexpr int kRuns = 5;
  for (const auto& n : (*c)->nodes()) {
    auto s = n->cpu_seconds();
    ASSERT_TRUE(s);
    cpu_before[n->port()] = *s;
  }
  for (int rep = 0; rep < kRuns; rep++) {
    auto start = Clock::now();
    auto reply = (*store)->sync(deltas);
    wall_ms.push_back(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
    ASSERT_TRUE(reply) << reply.error().str();
    ASSERT_TRUE(reply->retry.empty()) << reply->retry_reason;
  }
  for (const auto& n : (*c)->nodes()) {
    auto s = n->cpu_seconds();
    ASSERT_TRUE(s);
    cpu[n->port()] = (*s - cpu_before[n->port()]) / kRuns;
  }
  for (const auto& d : deltas) {
    const auto& tags = cluster::spread_tags(cluster::kClusterSpread);
    const std::string hash = cluster::spread_hash(
        "rl", tags[cluster::spread_bucket(d.key, cluster::kClusterSpread)], d.rule, 3'600'000);
    RedisServer* m = (*c)->master_of(cluster::key_slot(hash));
    ASSERT_NE(m, nullptr);
    keys[m->port()]++;
  }
  std::sort(wall_ms.begin(), wall_ms.end());
  double busiest = 0;
  uint64_t fewest = kBusyKeys, most = 0;
  std::printf("capacity: %zu master(s), %d keys, sync %lld ms wall (median of %d); CPU per sync:",
              masters, kBusyKeys, static_cast<long long>(wall_ms[kRuns / 2]), kRuns);
  for (const auto& [port, k] : keys) {
    std::printf(" %lu keys %.1f ms", static_cast<unsigned long>(k), cpu[port] * 1000);
    busiest = std::max(busiest, cpu[port]);
    fewest = std::min<uint64_t>(fewest, k);
    most = std::max<uint64_t>(most, k);
  }
  const double per_100ms = kBusyKeys * 0.1 / busiest;
  std::printf("; keys per 100 ms interval at the busiest master's rate: %.0f\n", per_100ms);
  EXPECT_EQ(keys.size(), masters);
  // Each master's share within 10% of an even one (0.65% is one standard deviation here).
  EXPECT_LT(static_cast<double>(most - fewest), 0.1 * kBusyKeys / static_cast<double>(masters));
  for (const auto& h : (*store)->servers()) EXPECT_EQ(h.calls, kRuns + 1u) << h.addr;
}

TEST(RedisClusterCapacity, OneMaster) { measure(1); }
TEST(RedisClusterCapacity, TwoMasters) { measure(2); }
TEST(RedisClusterCapacity, ThreeMasters) { measure(3); }
TEST(RedisClusterCapacity, FourMasters) { measure(4); }

}  // namespace
}  // namespace rl::testing
