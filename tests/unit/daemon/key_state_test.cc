// SPDX-License-Identifier: GPL-2.0-only
// What `rlctl key show` makes of a slot's state word, without a kernel.
#include <gtest/gtest.h>

#include "daemon/key_state.h"
#include "rl_limiter_state.h"

namespace rl::daemon {
namespace {

constexpr uint64_t kNow = 1'000'000'000'000ULL;  // 1000 s of CLOCK_MONOTONIC
constexpr uint64_t kMs = 1'000'000ULL;

rl_rule token_bucket(uint64_t ns_per_packet, uint64_t burst) {
  rl_rule r{};
  r.algo = RL_ALGO_TOKEN_BUCKET;
  r.cost_unit = RL_COST_PACKETS;
  r.interval_fp = ns_per_packet << 16;
  r.burst_ns = burst * ns_per_packet;
  return r;
}

TEST(KeyState, TokenBucketTokensFromTheArrivalTime) {
  rl_rule r = token_bucket(10 * kMs, 20);  // 100/s, burst 20
  rl_slot s{1, 0, 0};
  auto fresh = describe_key_state(r, s, kNow);
  EXPECT_EQ(fresh["tokens"], 20.0);
  EXPECT_TRUE(fresh["fresh"].get<bool>());
  s.state = kNow + 150 * kMs;  // 15 packets of debt
  auto used = describe_key_state(r, s, kNow);
  EXPECT_DOUBLE_EQ(used["tokens"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(used["tat_ahead_seconds"].get<double>(), 0.15);
  EXPECT_FALSE(used["fresh"].get<bool>());
  EXPECT_FALSE(used["blocked"].get<bool>());
  EXPECT_EQ(used["unit"], "packets");
  s.state = kNow - 5000 * kMs;  // long idle: a full bucket
  EXPECT_EQ(describe_key_state(r, s, kNow)["tokens"], 20.0);
}

TEST(KeyState, BlocksAndExpiredBlocks) {
  rl_rule r = token_bucket(10 * kMs, 20);
  rl_slot s{1, 0, RL_STATE_BLOCKED | (kNow + 30'000 * kMs)};
  auto blocked = describe_key_state(r, s, kNow);
  EXPECT_TRUE(blocked["blocked"].get<bool>());
  EXPECT_DOUBLE_EQ(blocked["blocked_for_seconds"].get<double>(), 30.0);
  EXPECT_EQ(blocked["tokens"], 0.0);
  s.state = RL_STATE_BLOCKED | (kNow - 1);  // over: reads as a fresh key, as the data path reads it
  auto over = describe_key_state(r, s, kNow);
  EXPECT_FALSE(over["blocked"].get<bool>());
  EXPECT_EQ(over["tokens"], 20.0);
}

TEST(KeyState, WindowsCountOnlyTheirWindow) {
  rl_rule r{};
  r.algo = RL_ALGO_FIXED_WINDOW;
  r.cost_unit = RL_COST_BYTES;
  r.cost_shift = 10;
  r.window_ns = 1000 * kMs;
  r.limit = 100;
  uint64_t win = kNow / r.window_ns;
  rl_slot s{1, 0, rl_fw_state(win, 42)};
  auto now = describe_key_state(r, s, kNow);
  EXPECT_EQ(now["count"], 42u);
  EXPECT_EQ(now["limit"], 100u);
  EXPECT_EQ(now["unit"], "1024 bytes");
  s.state = rl_fw_state(win - 1, 42);  // the last window's count is no longer counted
  EXPECT_EQ(describe_key_state(r, s, kNow)["count"], 0u);

  r.algo = RL_ALGO_SLIDING_WINDOW;
  r.cost_unit = RL_COST_PACKETS;
  // Now is the start of window `win`: the previous window weighs fully.
  s.state = rl_sw_state(win - 1, 0, 60);
  EXPECT_EQ(describe_key_state(r, s, kNow)["count"], 60u);
}

TEST(KeyState, SlidingLogCountsTheEntriesStillInTheWindow) {
  rl_rule r{};
  r.algo = RL_ALGO_SLIDING_LOG;
  r.cost_unit = RL_COST_PACKETS;
  r.cost_shift = 20;  // ticks of about 1 ms
  r.window_ns = 1000 * kMs;
  r.limit = 3;
  const uint64_t ticks = (r.window_ns + (1u << 20) - 1) >> 20;
  auto tick_at = [](uint64_t ns) { return (ns + (1u << 20) - 1) >> 20; };
  rl_slot s{1, 0, 0};
  // Admissions 1.5 s, 0.5 s and 0.1 s ago: two are within the last second.
  for (uint64_t ago : {1500 * kMs, 500 * kMs, 100 * kMs})
    s.state = rl_sl_add(s.state, r.limit, ticks, tick_at(kNow - ago));
  auto k = describe_key_state(r, s, kNow);
  EXPECT_EQ(k["algorithm"], "sliding_log");
  EXPECT_EQ(k["count"], 2u);
  EXPECT_EQ(k["limit"], 3u);
  EXPECT_EQ(describe_key_state(r, s, kNow + 2000 * kMs)["count"], 0u);
}

TEST(KeyState, KeyArguments) {
  auto a = parse_key_arg("198.18.0.7");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first.str(), "198.18.0.7");
  EXPECT_FALSE(a->second);
  auto p = parse_key_arg("2001:db8::1|53");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->first.str(), "2001:db8::1");
  EXPECT_EQ(p->second, 53);
  auto c = parse_key_arg("198.18.0.0/24");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->first.str(), "198.18.0.0");
  EXPECT_FALSE(parse_key_arg("198.18.0.7|99999").ok());
  EXPECT_FALSE(parse_key_arg("198.18.0.7|").ok());
  EXPECT_FALSE(parse_key_arg("web-server").ok());
}

TEST(KeyState, KeysFollowTheRulesKeyKind) {
  rl_rule r{};
  r.id = 7;
  r.key_kind = RL_KEY_SRC_PREFIX;
  r.v4_prefix = 24;
  auto a = parse_key_arg("198.18.5.9");
  ASSERT_TRUE(a.ok());
  rl_key k = key_for(r, a->first, 0);
  EXPECT_EQ(k.rule_id, 7u);
  EXPECT_EQ(k.family, 4);
  auto masked = parse_key_arg("198.18.5.0");
  ASSERT_TRUE(masked.ok());
  rl_key m = key_for(r, masked->first, 0);
  EXPECT_EQ(std::memcmp(k.addr, m.addr, sizeof(k.addr)), 0);
  r.key_kind = RL_KEY_SRC_ADDR_DPORT;
  EXPECT_EQ(key_for(r, a->first, 53).dport, 53);
}

}  // namespace
}  // namespace rl::daemon
