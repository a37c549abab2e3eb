// SPDX-License-Identifier: GPL-2.0-only
// The benchmark behind docs/cluster.md, "Measured": one sync of 100,000 active keys. It prints
// its figures; the only assertions are the round-trip count and a generous time bound.
//   ctest --test-dir build -R cluster.Scale --verbose
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "busy_node.h"
#include "cluster/sync_batch.h"
#include "redis_test.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class ScaleTest : public RedisTest {
 protected:
  void measure(int rules) {
    auto store = this->store(bulk_options(options()));
    ASSERT_TRUE(store);
    const int kKeys = 100'000;
    std::vector<cluster::KeyDelta> deltas;
    deltas.reserve(kKeys);
    for (int i = 0; i < kKeys; i++) {
      std::string key = busy_key(i);
      // A busy interval: every key active, one in a hundred over its limit.
      uint64_t delta = i % 100 == 0 ? 2000 : 1 + i % 7;
      deltas.push_back(key_delta("rule-" + std::to_string(i % rules), key, delta, 1000, 3'600'000));
    }
    // The first sync inserts every key; the next ones find them all in the current window, as
    // a node's syncs do in steady state.
    for (const char* pass : {"new keys", "existing keys", "existing keys", "existing keys",
                             "existing keys", "existing keys"}) {
      ASSERT_TRUE(server_->command({"CONFIG", "RESETSTAT"}));
      uint64_t trips = store->stats().round_trips;
      auto memory_before = server_->info_number("memory", "used_memory");
      ASSERT_TRUE(memory_before);
      auto start = Clock::now();
      auto reply = store->sync(deltas);
      auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
      ASSERT_TRUE(reply) << reply.error().str();
      auto evalsha = server_->command_calls("evalsha");
      auto usec = server_->command_usec("evalsha");
      ASSERT_TRUE(evalsha && usec);
      const uint64_t per_rule =
          (kKeys / rules + cluster::SyncBatch::kMaxCallKeys - 1) / cluster::SyncBatch::kMaxCallKeys;
      EXPECT_EQ(*evalsha, rules * per_rule);
      EXPECT_EQ(store->stats().round_trips - trips, 1u);
      EXPECT_GT(reply->over.size(), 0u);
      EXPECT_LT(wall, 5s);
      std::printf(
          "scale: %d keys, %d rule(s), %s: sync %lld ms wall, %llu ms in Redis (%llu EVALSHA), "
          "%zu over, 1 round trip\n",
          kKeys, rules, pass, static_cast<long long>(wall.count()),
          static_cast<unsigned long long>(*usec / 1000), static_cast<unsigned long long>(*evalsha),
          reply->over.size());
      auto memory_after = server_->info_number("memory", "used_memory");
      ASSERT_TRUE(memory_after);
      if (pass == std::string("new keys")) {
        std::printf("scale: Redis memory for %d keys: %.1f MB, %llu bytes per key\n", kKeys,
                    (*memory_after - *memory_before) / 1e6,
                    static_cast<unsigned long long>((*memory_after - *memory_before) / kKeys));
      }
      if (pass == std::string("new keys")) RecordProperty("new_ms", static_cast<int>(wall.count()));
    }
  }
};

// The round trip by sync size, keys already in Redis: the median of a few syncs each.
TEST_F(ScaleTest, RoundTripBySize) {
  auto o = options();
  o.command_timeout = 10s;
  auto store = this->store(o);
  ASSERT_TRUE(store);
  for (int keys : {1, 100, 1'000, 10'000}) {
    std::vector<cluster::KeyDelta> deltas;
    deltas.reserve(keys);
    for (int i = 0; i < keys; i++)
      deltas.push_back(key_delta("rule", "k" + std::to_string(i), 1, 1'000'000, 3'600'000));
    std::vector<int64_t> us;
    for (int rep = 0; rep < 11; rep++) {
      auto start = Clock::now();
      auto reply = store->sync(deltas);
      ASSERT_TRUE(reply) << reply.error().str();
      if (rep > 0) {  // the first creates the keys
        us.push_back(
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
      }
    }
    std::sort(us.begin(), us.end());
    std::printf("scale: %d keys, 1 rule, existing keys: sync %.2f ms wall (median of %zu)\n", keys,
                us[us.size() / 2] / 1000.0, us.size());
  }
}

TEST_F(ScaleTest, HundredThousandKeysOneRule) { measure(1); }

// What a node with 100,000 active keys does all day: a sync every 100 ms against 1 s windows, so
// both window hashes are live (every key's previous count is read too) and, once a second, the
// current hash starts afresh and every key is new in it.
TEST_F(ScaleTest, HundredThousandKeysSteadyState) {
  auto store = this->store(bulk_options(options()));
  ASSERT_TRUE(store);
  std::vector<cluster::KeyDelta> deltas;
  deltas.reserve(100'000);
  for (int i = 0; i < 100'000; i++)
    deltas.push_back(key_delta("rule", busy_key(i), busy_delta(i), busy_limit(i), 1000));
  std::vector<int64_t> wall_ms;
  uint64_t redis_usec = 0;
  auto next = Clock::now();
  for (int sync = 0; sync < 31; sync++) {
    std::this_thread::sleep_until(next);
    next += 100ms;
    uint64_t trips = store->stats().round_trips;
    auto before = server_->command_usec("evalsha");
    ASSERT_TRUE(before);
    auto start = Clock::now();
    auto reply = store->sync(deltas);
    auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    ASSERT_TRUE(reply) << reply.error().str();
    EXPECT_EQ(store->stats().round_trips - trips, 1u);
    EXPECT_LT(wall, 5s);
    auto after = server_->command_usec("evalsha");
    ASSERT_TRUE(after);
    if (sync > 0) {  // the first starts both windows from nothing
      wall_ms.push_back(wall.count());
      redis_usec += *after - *before;
    }
    if (Clock::now() > next) next = Clock::now();  // a slow sync delays the next, as in rld
  }
  std::sort(wall_ms.begin(), wall_ms.end());
  std::printf(
      "scale: 100000 keys, 1 rule, 1 s windows, a sync every 100 ms: %zu syncs, wall median "
      "%lld ms, 90th percentile %lld ms, max %lld ms, %zu within 100 ms; %.1f ms in Redis on "
      "average\n",
      wall_ms.size(), static_cast<long long>(wall_ms[wall_ms.size() / 2]),
      static_cast<long long>(wall_ms[wall_ms.size() * 9 / 10]),
      static_cast<long long>(wall_ms.back()),
      static_cast<size_t>(
          std::count_if(wall_ms.begin(), wall_ms.end(), [](int64_t ms) { return ms <= 100; })),
      redis_usec / 1000.0 / wall_ms.size());
}
TEST_F(ScaleTest, HundredThousandKeysTenRules) { measure(10); }

}  // namespace
}  // namespace rl::testing
