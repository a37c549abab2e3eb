// SPDX-License-Identifier: GPL-2.0-only
// The benchmark behind docs/cluster.md, "Cost per key": the Redis CPU time rl's sync takes per
// key, against the way most fleets count (envoy ratelimit: a pipelined INCRBY and EXPIRE per key
// and fixed window), on the same redis-server in the same run. It prints its figures; the only
// assertions are that every call of both ways succeeded.
//   ./build/tests/cluster/cluster_scale_test --gtest_filter='CostTest.*'
#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "bench_rounds.h"
#include "busy_node.h"
#include "redis_test.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kWindowMs = 1000;

// The fixed-window counter as envoy ratelimit keeps it in Redis: one key per (key, window), the
// window's start in its name, INCRBY by the hits and EXPIRE by the window, every command of a
// batch pipelined in one round trip. The client compares each count with the limit.
class IncrbyExpire {
 public:
  explicit IncrbyExpire(const RedisServer& server) {
    timeval tv{5, 0};
    ctx_ = server.unix_socket().empty()
               ? redisConnectWithTimeout("127.0.0.1", server.port(), tv)
               : redisConnectUnixWithTimeout(server.unix_socket().c_str(), tv);
  }
  IncrbyExpire(const IncrbyExpire&) = delete;
  IncrbyExpire& operator=(const IncrbyExpire&) = delete;
  ~IncrbyExpire() {
    if (ctx_) redisFree(ctx_);
  }
  bool ok() const { return ctx_ && !ctx_->err; }

  // The same keys, deltas and limits as rl's sync: keys over their limit, or -1 if a reply was
  // missing or an error.
  long sync(const std::vector<cluster::KeyDelta>& keys) {
    const uint64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
    const std::string window = "_" + std::to_string(now_ms / kWindowMs * kWindowMs / 1000);
    const std::string expire = std::to_string(kWindowMs / 1000);
    for (const auto& d : keys) {
      std::string key = "envoy_" + d.rule + "_" + d.key + window;
      std::string by = std::to_string(d.delta);
      const char* incr[] = {"INCRBY", key.c_str(), by.c_str()};
      redisAppendCommandArgv(ctx_, 3, incr, nullptr);
      const char* exp[] = {"EXPIRE", key.c_str(), expire.c_str()};
      redisAppendCommandArgv(ctx_, 3, exp, nullptr);
    }
    long over = 0;
    for (size_t i = 0; i < 2 * keys.size(); i++) {
      void* raw = nullptr;
      if (redisGetReply(ctx_, &raw) != REDIS_OK || !raw) return -1;
      auto* r = static_cast<redisReply*>(raw);
      bool bad = r->type != REDIS_REPLY_INTEGER;
      if (!bad && i % 2 == 0 && static_cast<uint64_t>(r->integer) > keys[i / 2].limit) over++;
      freeReplyObject(r);
      if (bad) return -1;
    }
    return over;
  }

 private:
  redisContext* ctx_ = nullptr;
};

struct Figures {
  std::vector<double> ns_per_key;  // Redis CPU per key, one entry per batch of syncs
  std::vector<double> wall_ms;     // per sync
};

void print(const char* what, Figures& f) {
  std::sort(f.ns_per_key.begin(), f.ns_per_key.end());
  std::sort(f.wall_ms.begin(), f.wall_ms.end());
  std::printf(
      "cost: %-32s Redis CPU per key %6.0f ns (lowest), %6.0f ns (median); sync wall median %5.1f "
      "ms\n",
      what, f.ns_per_key.front(), f.ns_per_key[f.ns_per_key.size() / 2],
      f.wall_ms[f.wall_ms.size() / 2]);
}

class CostTest : public RedisTest {};

// Both ways alternate in batches of ten syncs, a sync every 100 ms against 1 s windows (the
// steady state of a busy node), so drift in the host's speed falls on both alike.
TEST_F(CostTest, SyncScriptAgainstIncrbyExpire) {
  auto store = this->store(bulk_options(options()));
  ASSERT_TRUE(store);
  IncrbyExpire envoy(*server_);
  ASSERT_TRUE(envoy.ok());

  std::vector<cluster::KeyDelta> deltas;
  deltas.reserve(kBusyKeys);
  for (int i = 0; i < kBusyKeys; i++)
    deltas.push_back(key_delta("rule", busy_key(i), busy_delta(i), busy_limit(i), kWindowMs));

  // Memory per key, each way's keys new in one window.
  for (bool script : {true, false}) {
    ASSERT_TRUE(server_->command({"FLUSHALL"}));
    auto before = server_->info_number("memory", "used_memory");
    ASSERT_TRUE(before);
    if (script)
      ASSERT_TRUE(store->sync(deltas));
    else
      ASSERT_GE(envoy.sync(deltas), 0);
    auto after = server_->info_number("memory", "used_memory");
    ASSERT_TRUE(after);
    std::printf("cost: %-32s Redis memory per key and window %llu bytes\n",
                script ? "rl sync script" : "INCRBY + EXPIRE, pipelined",
                static_cast<unsigned long long>((*after - *before) / kBusyKeys));
  }

  Figures rl, incr;
  auto next = Clock::now();
  const int rounds = bench_rounds(6);
  for (int round = 0; round < rounds; round++) {
    for (bool script : {true, false}) {
      auto cpu_before = server_->cpu_seconds();
      ASSERT_TRUE(cpu_before) << cpu_before.error().str();
      Figures& f = script ? rl : incr;
      for (int sync = 0; sync < 10; sync++) {
        std::this_thread::sleep_until(next);
        next += 100ms;
        auto start = Clock::now();
        if (script) {
          auto reply = store->sync(deltas);
          ASSERT_TRUE(reply) << reply.error().str();
        } else {
          ASSERT_GE(envoy.sync(deltas), 0);
        }
        f.wall_ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        if (Clock::now() > next) next = Clock::now();
      }
      auto cpu_after = server_->cpu_seconds();
      ASSERT_TRUE(cpu_after) << cpu_after.error().str();
      if (round > 0)  // the first round starts both layouts from nothing
        f.ns_per_key.push_back((*cpu_after - *cpu_before) * 1e9 / (10.0 * kBusyKeys));
    }
  }
  std::printf("cost: %d keys a sync, 1 s windows, a sync every 100 ms, %d batches of 10 syncs\n",
              kBusyKeys, rounds - 1);
  print("rl sync script", rl);
  print("INCRBY + EXPIRE, pipelined", incr);
}

}  // namespace
}  // namespace rl::testing
