// SPDX-License-Identifier: GPL-2.0-only
// The benchmark behind docs/benchmarks.md, "TLS to Redis": what TLS adds to a busy node's sync
// (100,000 active keys every 100 ms against 1 s windows), plain and TLS measured in the same run
// against two servers alike but for TLS. It prints its figures; it asserts only that every sync
// succeeds in one round trip.
//   ./build/tests/cluster/cluster_scale_test --gtest_filter='TlsCost.*'
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <thread>

#include "bench_rounds.h"
#include "busy_node.h"
#include "cluster/redis_store.h"
#include "redis_test.h"
#include "test_pki.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct TlsFigures {
  int64_t wall_median_ms = 0, wall_p90_ms = 0;
  double redis_cpu_ms = 0;  // the server's CPU per sync, TLS work included (INFO cpu)
  double node_cpu_ms = 0;   // this thread's CPU per sync: formatting, TLS, reading replies
};

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// 31 syncs of the busy node's keys, paced every 100 ms; the first (both windows from nothing)
// is not counted.
TlsFigures run_syncs(cluster::RedisStore& store, RedisServer& server) {
  std::vector<cluster::KeyDelta> deltas;
  deltas.reserve(100'000);
  for (int i = 0; i < 100'000; i++)
    deltas.push_back(key_delta("rule", busy_key(i), busy_delta(i), busy_limit(i), 1000));
  std::vector<int64_t> wall;
  double cpu = 0, node_cpu = 0;
  auto next = Clock::now();
  for (int sync = 0; sync < 31; sync++) {
    std::this_thread::sleep_until(next);
    next += 100ms;
    auto before = server.cpu_seconds();
    EXPECT_TRUE(before) << before.error().str();
    const uint64_t trips = store.stats().round_trips;
    auto start = Clock::now();
    const double node_before = thread_cpu_ms();
    auto reply = store.sync(deltas);
    const double node_ms = thread_cpu_ms() - node_before;
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    EXPECT_TRUE(reply) << reply.error().str();
    EXPECT_EQ(store.stats().round_trips - trips, 1u);
    auto after = server.cpu_seconds();
    EXPECT_TRUE(after) << after.error().str();
    if (sync > 0 && before && after) {
      wall.push_back(ms);
      cpu += *after - *before;
      node_cpu += node_ms;
    }
    if (Clock::now() > next) next = Clock::now();
  }
  std::sort(wall.begin(), wall.end());
  if (wall.empty()) return {};
  return {wall[wall.size() / 2], wall[wall.size() * 9 / 10], cpu * 1000 / wall.size(),
          node_cpu / wall.size()};
}

TEST(TlsCost, BusyNodeSyncPlainAgainstTls) {
  ASSERT_FALSE(RedisServer::binary().empty()) << "redis-server is required";
  auto pki = TestPki::create();
  ASSERT_TRUE(pki) << pki.error().str();
  auto plain_server = RedisServer::start();
  ASSERT_TRUE(plain_server) << plain_server.error().str();
  auto tls_server = RedisServer::start(
      {.tls_cert = pki->server_cert, .tls_key = pki->server_key, .tls_ca = pki->ca});
  ASSERT_TRUE(tls_server) << tls_server.error().str();

  cluster::RedisOptions plain = bulk_options({});
  plain.port = (*plain_server)->port();
  cluster::RedisOptions tls = bulk_options({});
  tls.port = (*tls_server)->port();
  tls.tls.enabled = true;
  tls.tls.ca_file = pki->ca;
  auto plain_store = cluster::RedisStore::connect(plain);
  ASSERT_TRUE(plain_store) << plain_store.error().str();
  auto tls_store = cluster::RedisStore::connect(tls);
  ASSERT_TRUE(tls_store) << tls_store.error().str();

  // Alternated, so that both see the same machine; each one's lowest is its least disturbed.
  std::map<std::string, TlsFigures> lowest;
  const int rounds = bench_rounds(5);
  for (int round = 1; round <= rounds; round++) {
    for (auto [name, store, server] : {std::tuple{"plain", plain_store->get(), plain_server->get()},
                                       std::tuple{"TLS", tls_store->get(), tls_server->get()}}) {
      TlsFigures f = run_syncs(*store, *server);
      std::printf(
          "tls cost: round %d, %-5s: wall median %lld ms, 90th percentile %lld ms, Redis CPU %.1f "
          "ms, node CPU %.1f ms per sync\n",
          round, name, static_cast<long long>(f.wall_median_ms),
          static_cast<long long>(f.wall_p90_ms), f.redis_cpu_ms, f.node_cpu_ms);
      auto [it, first] = lowest.try_emplace(name, f);
      if (!first) {
        it->second.wall_median_ms = std::min(it->second.wall_median_ms, f.wall_median_ms);
        it->second.redis_cpu_ms = std::min(it->second.redis_cpu_ms, f.redis_cpu_ms);
        it->second.node_cpu_ms = std::min(it->second.node_cpu_ms, f.node_cpu_ms);
      }
    }
  }
  for (const char* name : {"plain", "TLS"})
    std::printf(
        "tls cost: lowest of %d, %-5s: 100000 keys a sync every 100 ms, wall median %lld ms, "
        "Redis CPU %.1f ms, node CPU %.1f ms per sync\n",
        rounds, name, static_cast<long long>(lowest[name].wall_median_ms),
        lowest[name].redis_cpu_ms, lowest[name].node_cpu_ms);
}

}  // namespace
}  // namespace rl::testing
