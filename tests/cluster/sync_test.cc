// SPDX-License-Identifier: GPL-2.0-only
// Counting, over-limit reports and their for_ms, against a real Redis.
#include <chrono>
#include <random>
#include <thread>

#include "redis_test.h"

namespace rl::testing {
namespace {

using cluster::KeyDelta;
using cluster::SyncReply;

class SyncTest : public RedisTest {};

TEST_F(SyncTest, OverLimitOnceTheCountExceedsIt) {
  auto store = this->store();
  ASSERT_TRUE(store);
  // An hour's window: the thousand syncs all but surely share one.
  const uint64_t kWindow = 3'600'000, kLimit = 500;
  std::optional<WindowState> model;
  int first_over = 0;
  for (int i = 1; i <= 1000; i++) {
    auto reply = store->sync({key_delta("api", "198.18.0.7", 1, kLimit, kWindow)});
    ASSERT_TRUE(reply) << reply.error().str();
    uint64_t now = reply->server_time_ms;
    model = window_add(model, 1, now, kWindow);
    uint64_t estimate = window_estimate(model, now, kWindow);
    if (estimate <= kLimit) {
      EXPECT_TRUE(reply->over.empty()) << "sync " << i;
      continue;
    }
    if (!first_over) first_over = i;
    ASSERT_EQ(reply->over.size(), 1u) << "sync " << i;
    const auto& over = reply->over[0];
    EXPECT_EQ(over.index, 0u);
    EXPECT_EQ(over.estimate, estimate) << "sync " << i;
    EXPECT_EQ(over.for_ms, window_settle_ms(model, now, kWindow, kLimit)) << "sync " << i;
    EXPECT_GT(over.for_ms, 0u);
    EXPECT_LE(over.for_ms, 2 * kWindow);
  }
  auto s = stored("api", "198.18.0.7", kWindow);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cur + s->prev, 1000u);
  if (s->prev == 0) {
    // By hand: a new key in one window counts exactly what was added, so the 501st is over.
    EXPECT_EQ(first_over, 501);
    EXPECT_EQ(s->cur, 1000u);
  }
}

TEST_F(SyncTest, TwoNodesShareAKey) {
  auto a = store(), b = store();
  ASSERT_TRUE(a && b);
  const uint64_t kWindow = 3'600'000, kLimit = 500;
  auto first = a->sync({key_delta("api", "2001:db8:1::/64", 300, kLimit, kWindow)});
  ASSERT_TRUE(first) << first.error().str();
  EXPECT_TRUE(first->over.empty());
  auto second = b->sync({key_delta("api", "2001:db8:1::/64", 300, kLimit, kWindow)});
  ASSERT_TRUE(second) << second.error().str();
  ASSERT_EQ(second->over.size(), 1u);
  auto s = stored("api", "2001:db8:1::/64", kWindow);
  ASSERT_TRUE(s);
  EXPECT_EQ(second->over[0].estimate, window_estimate(s, second->server_time_ms, kWindow));
  if (s->prev == 0) {
    EXPECT_EQ(second->over[0].estimate, 600u);
  }
}

// The script's for_ms against a millisecond-by-millisecond search, over states with a previous
// window (seeded directly in Redis), a current count over the limit on its own, windows from
// 1 ms to 100 s and counts up to 2^36.
TEST_F(SyncTest, ForMsIsTheFirstMillisecondBackUnderTheLimit) {
  auto store = this->store();
  ASSERT_TRUE(store);
  std::mt19937_64 rng(12345);
  auto pick = [&](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  const uint64_t windows[] = {1, 2, 3, 7, 64, 999, 1000, 4096, 60'000, 100'000};
  int over_cases = 0, alone_cases = 0;
  for (int i = 0; i < 300; i++) {
    uint64_t window = windows[i % std::size(windows)];
    uint64_t scale = i % 5 == 4 ? (uint64_t{1} << 36) : 2000;
    uint64_t limit = pick(0, scale / 2);
    uint64_t prev = pick(0, scale), delta = pick(1, scale / 2);
    std::string key = "k" + std::to_string(i);
    auto now = server_->time_ms();
    ASSERT_TRUE(now) << now.error().str();
    // The previous window, as if this key had been counted then.
    WindowState seed{*now / window - 1, prev, 0};
    this->seed("r", key, window, seed);
    auto reply = store->sync({key_delta("r", key, delta, limit, window)});
    ASSERT_TRUE(reply) << reply.error().str();
    uint64_t t = reply->server_time_ms;
    auto s = window_add(seed, delta, t, window);
    // With windows of a few ms the key may be gone already; if not, it is what the model says.
    if (auto in_redis = stored("r", key, window)) {
      EXPECT_EQ(in_redis->index, s->index);
      EXPECT_EQ(in_redis->cur, s->cur);
      EXPECT_EQ(in_redis->prev, s->prev);
    }
    EXPECT_EQ(s->index, t / window);
    uint64_t estimate = window_estimate(s, t, window);
    if (estimate <= limit) {
      EXPECT_TRUE(reply->over.empty()) << "case " << i;
      continue;
    }
    over_cases++;
    if (s->cur > limit) alone_cases++;
    ASSERT_EQ(reply->over.size(), 1u) << "case " << i;
    bool linear = window <= 100'000;
    uint64_t expect = window_settle_ms(s, t, window, limit, linear);
    EXPECT_EQ(expect, window_settle_ms(s, t, window, limit, false));
    EXPECT_EQ(reply->over[0].for_ms, expect)
        << "case " << i << " window " << window << " limit " << limit << " prev " << s->prev
        << " cur " << s->cur << " at " << t % window;
    EXPECT_EQ(reply->over[0].estimate, estimate) << "case " << i;
    // The rule's hash lives exactly until both counts have rolled out (-2: it has already).
    auto expiry = server_->command({"PEXPIRETIME", cluster::rule_hash("rl", "r", window)});
    ASSERT_TRUE(expiry);
    if (expiry->integer != -2) {
      EXPECT_EQ(static_cast<uint64_t>(expiry->integer), (s->index + 2) * window);
    }
  }
  // Both branches of the formula were exercised.
  EXPECT_GT(over_cases - alone_cases, 20);
  EXPECT_GT(alone_cases, 20);
}

TEST_F(SyncTest, OneRoundTripAndOneEvalshaPerRule) {
  // Lazily connected: the handshake rides in the same round trip as the sync.
  auto created = cluster::RedisStore::create(options());
  ASSERT_TRUE(created);
  auto& store = *created;
  std::vector<KeyDelta> deltas;
  deltas.reserve(10'000);
  for (int i = 0; i < 10'000; i++)
    deltas.push_back(
        key_delta("rule-" + std::to_string(i % 5), "10.0." + std::to_string(i), 1, 1000, 60'000));
  auto reset = server_->command({"CONFIG", "RESETSTAT"});
  ASSERT_TRUE(reset && !reset->is_error());
  auto start = std::chrono::steady_clock::now();
  auto reply = store->sync(deltas);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(reply) << reply.error().str();
  EXPECT_TRUE(reply->over.empty());
  EXPECT_EQ(store->stats().round_trips, 1u);
  EXPECT_EQ(store->stats().connect_attempts, 1u);
  EXPECT_EQ(*server_->command_calls("evalsha"), 5u);
  EXPECT_EQ(*server_->command_calls("eval"), 0u);
  EXPECT_EQ(*server_->command_calls("script|load"), 3u);
  EXPECT_LT(took, std::chrono::seconds(2));
  // One hash per rule holds its 2,000 keys each.
  auto keys = server_->command({"DBSIZE"});
  ASSERT_TRUE(keys);
  EXPECT_EQ(keys->integer, 5);
  EXPECT_EQ(hash_fields("rule-0", 60'000), 2'000 + 1);  // and the script's bookkeeping

  auto again = store->sync(deltas);
  ASSERT_TRUE(again) << again.error().str();
  EXPECT_EQ(store->stats().round_trips, 2u);
  EXPECT_EQ(*server_->command_calls("evalsha"), 10u);
}

// Keys a rule stops seeing are swept out of its hash while it keeps counting others; keys still
// counting survive the sweep with their counts.
TEST_F(SyncTest, DeadKeysAreSweptLiveOnesKept) {
  auto store = this->store();
  ASSERT_TRUE(store);
  const uint64_t kWindow = 300;
  std::vector<KeyDelta> burst;
  burst.reserve(3001);
  for (int i = 0; i < 3000; i++)
    burst.push_back(key_delta("r", "198.18.1." + std::to_string(i), 1, 1000, kWindow));
  burst.push_back(key_delta("r", "198.18.0.1", 1, 1000, kWindow));
  ASSERT_TRUE(store->sync(burst));
  EXPECT_EQ(hash_fields("r", kWindow), 3001 + 1);  // the keys and the script's bookkeeping
  // Only one key stays active; the burst's keys are dead from two windows on.
  for (int i = 0; i < 30 && hash_fields("r", kWindow) > 3; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto reply = store->sync({key_delta("r", "198.18.0.1", 1, 1000, kWindow)});
    ASSERT_TRUE(reply) << reply.error().str();
  }
  // The one live key, its bookkeeping and the sweep's cursor.
  EXPECT_EQ(hash_fields("r", kWindow), 3);
  auto live = stored("r", "198.18.0.1", kWindow);
  ASSERT_TRUE(live);
  EXPECT_GT(live->cur, 0u);
  EXPECT_FALSE(stored("r", "198.18.1.0", kWindow));
  auto sweeps = server_->command_calls("hscan");
  ASSERT_TRUE(sweeps);
  EXPECT_GT(*sweeps, 0u);
}

// A steady set of keys is never swept: nothing in the hash is dead.
TEST_F(SyncTest, SteadyKeysCostNoSweep) {
  auto store = this->store();
  ASSERT_TRUE(store);
  const uint64_t kWindow = 200;
  std::vector<KeyDelta> keys;
  keys.reserve(2000);
  for (int i = 0; i < 2000; i++)
    keys.push_back(key_delta("r", "198.18.2." + std::to_string(i), 1, 1000, kWindow));
  for (int i = 0; i < 12; i++) {  // 6 windows
    ASSERT_TRUE(store->sync(keys));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto sweeps = server_->command_calls("hscan");
  ASSERT_TRUE(sweeps);
  EXPECT_EQ(*sweeps, 0u);
  EXPECT_EQ(hash_fields("r", kWindow), 2000 + 1);
}

// Keys that come and go all the time (spoofed sources, say) keep the hash within a few times
// the keys still counting.
TEST_F(SyncTest, ChurningKeysKeepTheHashBounded) {
  auto store = this->store();
  ASSERT_TRUE(store);
  const uint64_t kWindow = 200;
  const int kPerSync = 1000;
  long long largest = 0;
  for (int sync = 0; sync < 40; sync++) {  // 20 windows, every key new
    std::vector<KeyDelta> keys;
    keys.reserve(kPerSync);
    for (int i = 0; i < kPerSync; i++)
      keys.push_back(
          key_delta("r", std::to_string(sync) + ":" + std::to_string(i), 1, 1000, kWindow));
    ASSERT_TRUE(store->sync(keys));
    const long long n = hash_fields("r", kWindow);
    ASSERT_GE(n, 0);
    largest = std::max(largest, n);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Two windows hold four syncs' keys; without the sweep the hash would hold all 40,000.
  std::printf("churn: largest hash %lld fields for %d live keys\n", static_cast<long long>(largest),
              4 * kPerSync);
  EXPECT_LE(largest, 4 * 4 * kPerSync);
}

TEST_F(SyncTest, NoscriptFallsBackToEval) {
  auto store = this->store();
  ASSERT_TRUE(store);
  auto flushed = server_->command({"SCRIPT", "FLUSH"});
  ASSERT_TRUE(flushed && !flushed->is_error());
  auto reply =
      store->sync({key_delta("a", "k", 2, 10, 60'000), key_delta("b", "k", 3, 10, 60'000)});
  ASSERT_TRUE(reply) << reply.error().str();
  EXPECT_EQ(store->stats().script_reloads, 2u);
  EXPECT_EQ(*server_->command_calls("eval"), 2u);
  auto a = stored("a", "k", 60'000), b = stored("b", "k", 60'000);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->cur + a->prev, 2u);
  EXPECT_EQ(b->cur + b->prev, 3u);
  // EVAL cached it again.
  ASSERT_TRUE(store->sync({key_delta("a", "k", 1, 10, 60'000)}));
  EXPECT_EQ(store->stats().script_reloads, 2u);
}

TEST_F(SyncTest, RefusedRulesAreReportedAndTheRestApplied) {
  auto store = this->store();
  ASSERT_TRUE(store);
  // A key of another type where the "bad" rule's hash would be: its whole call is refused
  // before anything is written.
  auto set = server_->command({"SET", cluster::rule_hash("rl", "bad", 60'000), "x"});
  ASSERT_TRUE(set && !set->is_error());
  auto reply = store->sync({
      key_delta("bad", "k1", 1, 10, 60'000),
      key_delta("good", "k", 4, 10, 60'000),
      key_delta("bad", "k2", 1, 10, 60'000),
      key_delta("invalid", "k", 1, 10, 0),
      key_delta("in{valid", "k", 1, 10, 60'000),
  });
  ASSERT_TRUE(reply) << reply.error().str();
  EXPECT_EQ(reply->rejected, (std::vector<size_t>{0, 2, 3, 4}));
  EXPECT_FALSE(reply->rejected_reason.empty());
  EXPECT_TRUE(store->connected());
  auto type = server_->command({"TYPE", cluster::rule_hash("rl", "bad", 60'000)});
  ASSERT_TRUE(type);
  EXPECT_EQ(type->str, "string");
  auto good = stored("good", "k", 60'000);
  ASSERT_TRUE(good);
  EXPECT_EQ(good->cur + good->prev, 4u);
}

TEST_F(SyncTest, RepeatedKeyInOneRequestAddsUp) {
  auto store = this->store();
  ASSERT_TRUE(store);
  auto reply =
      store->sync({key_delta("r", "k", 3, 5, 3'600'000), key_delta("r", "k", 4, 5, 3'600'000)});
  ASSERT_TRUE(reply) << reply.error().str();
  auto s = stored("r", "k", 3'600'000);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cur + s->prev, 7u);
  // Both entries name one key, which holds 7 > 5.
  ASSERT_EQ(reply->over.size(), 2u);
  EXPECT_EQ(reply->over[0].index, 0u);
  EXPECT_EQ(reply->over[1].index, 1u);
  EXPECT_EQ(reply->over[0].estimate, 7u);
  EXPECT_EQ(reply->over[1].estimate, 7u);
  EXPECT_EQ(reply->over[0].for_ms, reply->over[1].for_ms);
}

// Each node takes its own headroom off a key's limit, so keys of one rule carry different
// limits: one call still carries them all, and each key is judged against its own.
TEST_F(SyncTest, EachKeyIsJudgedAgainstItsOwnLimit) {
  auto store = this->store();
  ASSERT_TRUE(store);
  auto reset = server_->command({"CONFIG", "RESETSTAT"});
  ASSERT_TRUE(reset && !reset->is_error());
  auto reply =
      store->sync({key_delta("r", "a", 10, 5, 3'600'000), key_delta("r", "b", 10, 20, 3'600'000),
                   key_delta("r", "c", 3, 100, 3'600'000), key_delta("r", "c", 3, 5, 3'600'000)});
  ASSERT_TRUE(reply) << reply.error().str();
  EXPECT_EQ(*server_->command_calls("evalsha"), 1u);
  // "a": 10 > 5. "b": 10 <= 20. "c": listed twice, 6 against the stricter limit, 5.
  ASSERT_EQ(reply->over.size(), 3u);
  EXPECT_EQ(reply->over[0].index, 0u);
  EXPECT_EQ(reply->over[0].estimate, 10u);
  EXPECT_EQ(reply->over[1].index, 2u);
  EXPECT_EQ(reply->over[2].index, 3u);
  EXPECT_EQ(reply->over[1].estimate, 6u);
}

TEST_F(SyncTest, EmptySyncSendsNothing) {
  auto store = this->store();
  ASSERT_TRUE(store);
  uint64_t trips = store->stats().round_trips;
  auto reply = store->sync({});
  ASSERT_TRUE(reply);
  EXPECT_TRUE(reply->over.empty());
  EXPECT_EQ(store->stats().round_trips, trips);
}

TEST_F(SyncTest, KeyPrefixNamesTheKeys) {
  auto o = options();
  o.key_prefix = "edge-fleet";
  auto store = this->store(o);
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->sync({key_delta("api", "*", 1, 10, 60'000)}));
  EXPECT_TRUE(stored("api", "*", 60'000, "edge-fleet"));
  EXPECT_FALSE(stored("api", "*", 60'000, "rl"));
}

}  // namespace
}  // namespace rl::testing
