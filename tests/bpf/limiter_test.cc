// SPDX-License-Identifier: GPL-2.0-only
// Each algorithm's admitted counts against its formula, with the controlled clock.
#include <arpa/inet.h>

#include "fixture.h"

namespace rl::testing {
namespace {

class LimiterTest : public BpfTest {
 protected:
  void at(uint64_t ns) { hooks().set_clock(kT0 + ns); }
  // The first rule's sliding-log tick, in ns.
  uint64_t compiled_tick() const { return uint64_t{1} << compiled_.rules[0].cost_shift; }
  // Replaces the datapath with a fresh one (a new key table and hash seed) of `key_capacity`.
  void reload(uint32_t key_capacity = LoadOptions{}.key_capacity, bool key_table_full = false) {
    LoadOptions o;
    o.key_capacity = key_capacity;
    o.key_table_full = key_table_full;
    o.trace_decisions = true;
    auto dp = BpfDatapath::load(o);
    ASSERT_TRUE(dp.ok()) << dp.error().str();
    dp_ = std::move(*dp);
    hooks().set_clock(kT0);
  }
};

TEST_F(LimiterTest, TokenBucketBurstThenRate) {
  one_rule(token_bucket("tb", 10, 5));  // T = 100 ms
  auto f = udp4("198.18.0.1");
  EXPECT_EQ(passed(f, 20), 5) << "a fresh key gets its burst";
  at(99'999'999);
  EXPECT_EQ(passed(f, 3), 0) << "the next token is due at +100 ms";
  at(100'000'000);
  EXPECT_EQ(passed(f, 3), 1);
  at(1'100'000'000);  // 1 s later: 10 tokens, capped at the burst of 5
  EXPECT_EQ(passed(f, 20), 5);
  // Over a long run at a steady 100 packets/s, exactly rate * time + burst pass.
  uint64_t start = 10 * kSec;
  int ok = 0;
  for (int i = 0; i < 1000; i++) {
    at(start + i * 10'000'000ULL);
    ok += passed(f, 1);
  }
  EXPECT_EQ(ok, 5 + 99);  // burst at t=0, then one per 100 ms over 9.99 s
}

// An IPv6 client holds a /64: a per-source key counts the /64, whatever host bits a sender
// rotates through, unless the rule keys by the whole address.
TEST_F(LimiterTest, PerSourceKeysCountAnIpv6ClientByItsPrefix) {
  one_rule(token_bucket("per-client", 1, 2));
  EXPECT_EQ(passed(udp6("2001:db8:0:5::1"), 1), 1);
  EXPECT_EQ(passed(udp6("2001:db8:0:5:ffff:1:2:3"), 1), 1);
  EXPECT_EQ(passed(udp6("2001:db8:0:5::9"), 4), 0) << "the /64's burst of 2 is spent";
  EXPECT_EQ(passed(udp6("2001:db8:0:6::1"), 4), 2) << "the next /64 is another client";
  EXPECT_EQ(passed(udp4("198.18.0.1"), 4), 2);
  EXPECT_EQ(passed(udp4("198.18.0.2"), 4), 2) << "IPv4 sources are whole addresses";

  auto hosts = token_bucket("per-host", 1, 2);
  hosts.v6_prefix = 128;
  one_rule(hosts);
  EXPECT_EQ(passed(udp6("2001:db8:0:7::1"), 4), 2);
  EXPECT_EQ(passed(udp6("2001:db8:0:7::2"), 4), 2) << "keyed by /128, each address counts alone";

  auto ports = token_bucket("per-client-port", 1, 2);
  ports.key = policy::KeyKind::kSourceAddressPort;
  ports.v6_prefix = 56;
  one_rule(ports);
  auto to = [](const std::string& src, uint16_t port) {
    return packet::Builder().ipv6(src, "2001:db8:ff::1").udp(40000, port).build();
  };
  EXPECT_EQ(passed(to("2001:db8:1:aa::1", 53), 4), 2);
  EXPECT_EQ(passed(to("2001:db8:1:bb::1", 53), 4), 0) << "the same /56 and port";
  EXPECT_EQ(passed(to("2001:db8:1:bb::1", 123), 4), 2) << "another port";
}

TEST_F(LimiterTest, TokenBucketBytes) {
  auto r = token_bucket("bw", 0, 0);
  r.limit.rate = per_second(10'000, policy::Unit::kBytes);  // 10 kB/s
  r.limit.burst = 3000;
  one_rule(r);
  auto f = packet::Builder().ipv4("198.18.0.1", "192.0.2.1").udp(1, 53).payload(958).build();
  ASSERT_EQ(f.size(), 1000u);
  EXPECT_EQ(passed(f, 10), 3);
  at(100'000'000);  // 1000 bytes more
  EXPECT_EQ(passed(f, 10), 1);
  auto small = udp4("198.18.0.1");
  at(100'000'000 + 6'000'000);  // 60 bytes of credit: one 60-byte frame
  EXPECT_EQ(passed(small, 3), 1);
}

TEST_F(LimiterTest, FixedWindow) {
  one_rule(window("fw", policy::Algorithm::kFixedWindow, 4, kSec));
  auto f = udp4("198.18.0.1");
  at(999'000'000);  // late in window 1000
  EXPECT_EQ(passed(f, 10), 4);
  at(kSec);  // the next window starts empty: the boundary burst fixed windows allow
  EXPECT_EQ(passed(f, 10), 4);
  at(kSec + 999'999'999);
  EXPECT_EQ(passed(f, 10), 0);
}

TEST_F(LimiterTest, SlidingWindowWeighsThePreviousWindow) {
  one_rule(window("sw", policy::Algorithm::kSlidingWindow, 10, kSec));
  auto f = udp4("198.18.0.1");
  at(900'000'000);
  EXPECT_EQ(passed(f, 20), 10);
  // 25% into the next window the previous 10 weigh 7.5 (floor 7): 3 more may pass.
  at(kSec + 250'000'000);
  EXPECT_EQ(passed(f, 20), 3);
  // 75% in: previous weighs 2.5 (floor 2), current holds 3: 5 more.
  at(kSec + 750'000'000);
  EXPECT_EQ(passed(f, 20), 5);
  // Two windows later nothing carries over.
  at(3 * kSec);
  EXPECT_EQ(passed(f, 20), 10);
}

// "At most 5 in any minute": the classic boundary burst, 5 at the end of one minute and 5 at the
// start of the next, passes a fixed window whole and a sliding log only once the first 5 are a
// minute old.
TEST_F(LimiterTest, SlidingLogRefusesTheBoundaryBurstAFixedWindowAdmits) {
  constexpr uint64_t kMinute = 60 * kSec;
  const uint64_t edge = (kT0 / kMinute + 1) * kMinute - kT0;  // a fixed window starts here
  one_rule(window("fw", policy::Algorithm::kFixedWindow, 5, kMinute));
  auto f = udp4("198.18.0.1");
  at(edge - kSec);
  EXPECT_EQ(passed(f, 5), 5);
  at(edge);
  EXPECT_EQ(passed(f, 5), 5) << "fixed_window: 10 within one second";

  one_rule(window("log", policy::Algorithm::kSlidingLog, 5, kMinute));
  ASSERT_EQ(compiled_.rules[0].algo, RL_ALGO_SLIDING_LOG);
  auto g = udp4("198.18.0.2");
  at(edge - kSec);
  EXPECT_EQ(passed(g, 5), 5);
  at(edge);
  EXPECT_EQ(passed(g, 5), 0) << "sliding_log: the first 5 are one second old";
  at(edge - kSec + kMinute - 1);
  EXPECT_EQ(passed(g, 5), 0) << "still within a minute of them";
  at(edge - kSec + kMinute + 2 * compiled_tick());
  EXPECT_EQ(passed(g, 5), 5) << "a minute (and the rounding's two ticks) later, 5 again";
}

// Whatever the spacing, no window of the rule's length ever holds more than its amount, and a
// steady sender gets exactly that many per window.
TEST_F(LimiterTest, SlidingLogNeverAdmitsMoreThanItsAmountInAnyWindow) {
  for (uint64_t n : {1, 3, 8}) {
    one_rule(window("log", policy::Algorithm::kSlidingLog, n, kSec));
    auto f = udp4("198.18.0.1");
    std::vector<uint64_t> admitted;
    // A packet every 7 ms for 5 s, with a burst of 4 every 300 ms.
    for (uint64_t t = 0; t < 5 * kSec; t += 7'000'000) {
      at(t);
      for (int i = 0, k = t % 300'000'000 < 7'000'000 ? 4 : 1; i < k; i++)
        if (passed(f, 1)) admitted.push_back(t);
    }
    for (size_t i = n; i < admitted.size(); i++)
      ASSERT_GE(admitted[i] - admitted[i - n], kSec) << "n " << n << ", admission " << i;
    // Steady over 5 s: n per second, less at most one refusal a window for the rounding.
    EXPECT_GE(admitted.size(), 5 * n - 5) << "n " << n;
    EXPECT_LE(admitted.size(), 5 * n) << "n " << n;
  }
}

TEST_F(LimiterTest, WindowBytesRoundAgainstTheSender) {
  auto r = window("swb", policy::Algorithm::kSlidingWindow, 0, kSec);
  r.limit.rate = {3'000'000, kSec, policy::Unit::kBytes};  // needs a 2-bit unit shift
  one_rule(r);
  ASSERT_EQ(compiled_.rules[0].cost_shift, 2);
  auto f = packet::Builder().ipv4("198.18.0.1", "192.0.2.1").udp(1, 53).payload(1457).build();
  ASSERT_EQ(f.size(), 1499u);  // costs ceil(1499 / 4) = 375 units of the 750000 allowed
  EXPECT_EQ(passed(f, 5000), 2000);
}

TEST_F(LimiterTest, BlockPeriod) {
  auto r = token_bucket("blk", 10, 2);
  r.block_ns = 5 * kSec;
  one_rule(r);
  auto f = udp4("198.18.0.1");
  EXPECT_EQ(passed(f, 2), 2);
  EXPECT_EQ(send(f).reason, RL_REASON_LIMITED);
  at(kSec);  // the bucket has refilled, but the key is blocked
  EXPECT_EQ(send(f).reason, RL_REASON_BLOCKED);
  at(5 * kSec - 1);
  EXPECT_EQ(passed(f, 5), 0);
  at(5 * kSec);
  EXPECT_EQ(passed(f, 5), 2);
  EXPECT_EQ(send(udp4("198.18.0.2")).reason, RL_REASON_ADMITTED) << "other keys are not blocked";
  EXPECT_GE(global(RL_GC_BLOCKED), 6u);
}

TEST_F(LimiterTest, MonitorCountsButPasses) {
  auto r = token_bucket("dry-run", 1, 2);
  r.action = policy::Action::kMonitor;
  one_rule(r);
  auto f = udp4("198.18.0.1");
  EXPECT_EQ(passed(f, 10), 10);
  auto c = counters("dry-run");
  EXPECT_EQ(c.matched_pkts, 10u);
  EXPECT_EQ(c.monitored_pkts, 8u);
  EXPECT_EQ(c.dropped_pkts, 0u);
  EXPECT_EQ(send(f).reason, RL_REASON_LIMITED);
}

// Slots of idle keys are reused; when every way of a set is busy a new key is judged by its
// prefix's overflow bucket instead of evicting a key that is being limited.
TEST_F(LimiterTest, FullSetsFallBackToOverflowBucket) {
  ASSERT_NO_FATAL_FAILURE(reload(RL_WAYS));  // one set
  one_rule(token_bucket("tiny", 1, 1));
  for (int i = 1; i <= RL_WAYS; i++)
    EXPECT_EQ(send(udp4("198.18.0." + std::to_string(i))).overflow, 0u);
  // All four ways owe a token for a second: the fifth source shares the 198.18/16 bucket.
  auto d = send(udp4("198.18.0.99"));
  EXPECT_EQ(d.overflow, 1u);
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp4("198.18.0.100")).reason, RL_REASON_LIMITED) << "same /16 bucket, now empty";
  EXPECT_EQ(send(udp4("198.18.0.1")).reason, RL_REASON_LIMITED) << "known keys keep their state";
  // Every key is idle again one second later; slots are reusable from the next idle tick.
  at(kSec - 1);
  EXPECT_EQ(send(udp4("198.18.0.98")).overflow, 1u) << "a key that owes a token keeps its slot";
  at(kSec + (1ULL << RL_IDLE_SHIFT));
  d = send(udp4("198.18.0.99"));
  EXPECT_EQ(d.overflow, 0u);
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED);
  EXPECT_EQ(global(RL_GC_KEY_OVERFLOW), 3u);
}

// Of the reusable ways, a new key takes the one whose key went idle first: a source that was
// active a moment ago keeps its slot over sources that sent once, long before.
TEST_F(LimiterTest, ANewKeyReusesTheWayIdleLongest) {
  ASSERT_NO_FATAL_FAILURE(reload(RL_WAYS));  // one set
  one_rule(token_bucket("tiny", 1, 1));
  for (int i = 1; i <= RL_WAYS; i++)
    EXPECT_EQ(send(udp4("198.18.0." + std::to_string(i))).overflow, 0u);
  // Source 1, in the first way, comes back once its bucket is full: it goes idle two seconds
  // after the others.
  at(2 * kSec);
  EXPECT_EQ(send(udp4("198.18.0.1")).reason, RL_REASON_ADMITTED);
  at(3 * kSec + (1ULL << RL_IDLE_SHIFT));  // every way is reusable
  const uint64_t inserted = global(RL_GC_KEY_INSERTED);
  auto d = send(udp4("198.18.0.99"));
  EXPECT_EQ(d.overflow, 0u);
  EXPECT_EQ(global(RL_GC_KEY_INSERTED), inserted + 1);
  EXPECT_EQ(send(udp4("198.18.0.1")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(global(RL_GC_KEY_INSERTED), inserted + 1) << "source 1 kept its slot";
  EXPECT_EQ(send(udp4("198.18.0.2")).overflow, 0u);
  EXPECT_EQ(global(RL_GC_KEY_INSERTED), inserted + 2) << "source 2's way went to the new key";
}

// The table starts at 16,384 sets and grows by splitting sets while packets run
// (controller/datapath/key_sets.h): every key keeps its state and its slot through the splits,
// found where the real program looks for it.
TEST_F(LimiterTest, KeysKeepTheirStateWhileTheTableGrows) {
  ASSERT_NO_FATAL_FAILURE(reload(262144));  // 65,536 sets
  EXPECT_EQ(dp_->key_sets_active(), 16384u);
  one_rule(token_bucket("grow", 1, 1));
  auto src = [](int i) {
    return udp4("198.18." + std::to_string(i >> 8) + "." + std::to_string(i & 255));
  };
  std::vector<int> held;  // sources in the table (not judged by an overflow bucket)
  for (int i = 1; i <= 30000; i++) {
    auto d = send(src(i));
    if (!d.overflow) {
      EXPECT_EQ(d.reason, RL_REASON_ADMITTED);
      held.push_back(i);
    }
  }
  // 30,000 random keys in 16,384 four-way sets overflow 877 +- 33 of them (Poisson, the
  // seed is random): 28,800 fails 1 run in 10^20 by chance, and always with a way lost
  // (three ways overflow about 2,740).
  ASSERT_GT(held.size(), 28800u);
  const uint64_t inserted = global(RL_GC_KEY_INSERTED);
  auto before = dp_->key_table_usage(kT0);
  EXPECT_EQ(before.first, held.size());

  auto grown = dp_->grow_key_table(before.first);
  ASSERT_TRUE(grown.ok()) << grown.error().str();
  EXPECT_EQ(*grown, 16384u) << "30,000 keys: above one per set of 16,384, not of 32,768";
  EXPECT_EQ(dp_->key_sets_active(), 32768u);
  grown = dp_->grow_key_table(100000);
  ASSERT_TRUE(grown.ok()) << grown.error().str();
  EXPECT_EQ(dp_->key_sets_active(), 65536u) << "up to the capacity";

  for (int i : held) {
    auto d = send(src(i));
    ASSERT_EQ(d.reason, RL_REASON_LIMITED) << "source " << i << " owes its token still";
    ASSERT_EQ(d.overflow, 0u) << i;
  }
  EXPECT_EQ(global(RL_GC_KEY_INSERTED), inserted) << "no key was lost and inserted again";
  EXPECT_EQ(dp_->key_table_usage(kT0).first, held.size());
  auto key = [&](int i) {
    rl_key k{};
    k.rule_id = compiled_.rules[0].id;
    k.kind = RL_KEY_SRC_ADDR;
    k.family = 4;
    k.addr[0] = htonl(0xc6120000u | static_cast<uint32_t>(i));  // 198.18.0.0 + i
    return k;
  };
  EXPECT_TRUE(dp_->read_key(key(held.front())).has_value()) << "rld finds keys where packets do";
  EXPECT_EQ(dp_->reset_key(key(held.back())), 1u);
  EXPECT_EQ(send(src(held.back())).reason, RL_REASON_ADMITTED) << "reset: a fresh bucket";
}

// key_table_full: packets use every set from the start, so keys that would overflow the
// smallest table while it grows each get a slot of their own at once.
TEST_F(LimiterTest, AFullTableFromTheStartGivesEveryKeyASlot) {
  ASSERT_NO_FATAL_FAILURE(reload(1 << 18, true));  // 65,536 sets; a growing table starts at 16,384
  EXPECT_EQ(dp_->key_sets_active(), (1u << 18) / RL_WAYS);
  one_rule(token_bucket("tb", 1, 1));
  // 30,000 keys: in 16,384 four-way sets 877 +- 33 would find their set full; in 65,536 about
  // 7 (Poisson, the seed is random), so 50 is never reached by chance.
  int admitted = 0;
  for (int i = 1; i <= 30'000; i++)
    admitted +=
        send(udp4("198.18." + std::to_string(i >> 8) + "." + std::to_string(i & 255))).reason ==
        RL_REASON_ADMITTED;
  EXPECT_LT(global(RL_GC_KEY_OVERFLOW), 50u);
  EXPECT_GT(admitted, 30'000 - 50);
  auto grown = dp_->grow_key_table(30'000);
  ASSERT_TRUE(grown.ok());
  EXPECT_EQ(*grown, 0u) << "nothing left to grow";
}

// A blocked key's slot is never reused while the block is in force, even once its bucket is full
// again; when the block ends the slot is free for other keys and the key itself starts fresh.
TEST_F(LimiterTest, BlockedKeysKeepTheirSlot) {
  ASSERT_NO_FATAL_FAILURE(reload(RL_WAYS));  // one set
  auto r = token_bucket("blk", 1, 1);
  r.block_ns = 10 * kSec;
  one_rule(r);
  for (int i = 1; i <= RL_WAYS; i++) {
    auto f = udp4("198.18.0." + std::to_string(i));
    EXPECT_EQ(send(f).reason, RL_REASON_ADMITTED);
    EXPECT_EQ(send(f).reason, RL_REASON_LIMITED);
  }
  at(5 * kSec);  // every bucket is full again, every key still blocked
  EXPECT_EQ(send(udp4("198.18.0.1")).reason, RL_REASON_BLOCKED);
  EXPECT_EQ(send(udp4("198.18.0.99")).overflow, 1u);
  auto [used, blocked] = dp_->key_table_usage(kT0 + 5 * kSec);
  EXPECT_EQ(used, 4u);
  EXPECT_EQ(blocked, 4u);
  at(10 * kSec + (1ULL << RL_IDLE_SHIFT));
  EXPECT_EQ(send(udp4("198.18.0.99")).overflow, 0u) << "blocks ended: slots are reusable";
  auto d = send(udp4("198.18.0.2"));
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED) << "a key starts fresh after its block";
}

// The key hash is seeded per key table: the same key hashes differently in another table, and
// reset_key (rlctl unblock) finds a blocked key with its table's own seed.
TEST_F(LimiterTest, KeyHashIsSeededPerTable) {
  auto r = token_bucket("blk", 1, 1);
  r.block_ns = 60 * kSec;
  one_rule(r);
  auto f = udp4("198.18.0.1");
  auto first = send(f);
  EXPECT_EQ(first.reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(f).reason, RL_REASON_LIMITED);
  EXPECT_EQ(send(f).reason, RL_REASON_BLOCKED);

  rl_key k{};
  k.rule_id = compiled_.rules[0].id;
  k.kind = RL_KEY_SRC_ADDR;
  k.family = 4;
  ASSERT_EQ(inet_pton(AF_INET, "198.18.0.1", k.addr), 1);
  EXPECT_EQ(dp_->reset_key(k), 1u);
  EXPECT_EQ(send(f).reason, RL_REASON_ADMITTED) << "unblocked, and the bucket is full again";

  ASSERT_NO_FATAL_FAILURE(reload());
  one_rule(r);
  auto again = send(f);
  EXPECT_EQ(again.reason, RL_REASON_ADMITTED);
  EXPECT_NE(again.key_hash, first.key_hash) << "each table draws its own seed";
}

}  // namespace
}  // namespace rl::testing
