// SPDX-License-Identifier: GPL-2.0-only
// The verifier accepts the program once, whatever the policy; these tests load policies at
// the data path's stated limits and check that lookups stay correct.
#include <random>

#include "fixture.h"

namespace rl::testing {
namespace {

class ScaleTest : public BpfTest {};

TEST_F(ScaleTest, ThousandRulesAndHundredThousandPrefixes) {
  policy::Policy p;
  std::mt19937 rng(3);
  // 100,000 distinct prefixes in 100 sets: /32s in 198.18.0.0/15, /64s and /128s in 2001:db8::/32.
  for (int s = 0; s < 100; s++) {
    policy::SourceSet set;
    set.name = "set" + std::to_string(s);
    for (int i = 0; i < 1000; i++) {
      int n = s * 1000 + i;
      Address a;
      if (i % 2) {
        a.family = 4;
        a.bytes = {198, static_cast<uint8_t>(18 + (n >> 16 & 1)), static_cast<uint8_t>(n >> 8),
                   static_cast<uint8_t>(n)};
        set.prefixes.push_back(Prefix::of(a, 32));
      } else {
        a.family = 6;
        bool host = i % 4 == 0;
        a.bytes = {0x20,
                   0x01,
                   0x0d,
                   0xb8,
                   static_cast<uint8_t>(host),
                   static_cast<uint8_t>(n >> 16),
                   static_cast<uint8_t>(n >> 8),
                   static_cast<uint8_t>(n),
                   0,
                   0,
                   0,
                   0,
                   0,
                   0,
                   0,
                   1};
        set.prefixes.push_back(Prefix::of(a, host ? 128 : 64));
      }
    }
    p.sets.push_back(set);
  }
  // 1,024 rules: rule k matches set k % 100 and destination port 1000 + k.
  for (int k = 0; k < RL_DEFAULT_MAX_RULES; k++) {
    auto r = token_bucket("rule" + std::to_string(k), 100, 100);
    r.match.sources = {"set" + std::to_string(k % 100)};
    r.match.ports = {{static_cast<uint16_t>(1000 + k), static_cast<uint16_t>(1000 + k)}};
    r.priority = k;
    p.rules.push_back(r);
  }
  apply(p);
  if (HasFatalFailure()) return;
  EXPECT_GE(compiled_.sources.size(), 100000u);

  // Address n belongs to set n / 1000; rule k needs set k % 100 and port 1000 + k.
  for (int trial = 0; trial < 300; trial++) {
    int k = rng() % RL_DEFAULT_MAX_RULES;
    int n = (k % 100) * 1000 + static_cast<int>(2 * (rng() % 500)) + 1;  // an IPv4 member (odd i)
    std::string src = "198." + std::to_string(18 + (n >> 16 & 1)) + "." +
                      std::to_string((n >> 8) & 255) + "." + std::to_string(n & 255);
    auto d = send(udp4(src, static_cast<uint16_t>(1000 + k)));
    ASSERT_EQ(d.rule_pos, k) << src << " port " << 1000 + k;
  }
  // The last rule, in the last bitmap word, is reachable too.
  EXPECT_EQ(send(udp4("198.18.1.0", 1000 + 1023)).rule_pos, -1);
}

// 1,024 rules on the fields indexed by value: each rule its own length range, a TTL range and
// TCP flags under a mask. Every lookup stays one table load, and the classes stay within the
// generation's budget.
TEST_F(ScaleTest, ThousandRulesOnTcpFlagsTtlAndLength) {
  policy::Policy p;
  auto len_of = [](int k) { return static_cast<uint16_t>(40 + k * 16); };
  for (int k = 0; k < RL_DEFAULT_MAX_RULES; k++) {
    auto r = token_bucket("rule" + std::to_string(k), 100, 100);
    r.match.protocol = 6;
    r.match.length = {{len_of(k), static_cast<uint16_t>(len_of(k) + 15)}};
    r.match.ttl = {{static_cast<uint16_t>(k % 200), static_cast<uint16_t>(k % 200 + 55)}};
    r.match.tcp_flags = {packet::kAck | packet::kRst, k % 2 ? packet::kRst : packet::kAck};
    r.priority = k;
    p.rules.push_back(r);
  }
  apply(p);
  if (HasFatalFailure()) return;
  EXPECT_EQ(compiled_.config.dims_used, RL_DIM_TCP_FLAGS | RL_DIM_TTL | RL_DIM_LENGTH);
  EXPECT_LT(compiled_.classes.size(), static_cast<size_t>(RL_MAX_CLASSES));
  std::printf("1,024 rules on flags, TTL and length: %zu classes\n", compiled_.classes.size());

  // The IP header declares the length; the frame itself stays small.
  auto frame = [](uint16_t len, uint8_t ttl, uint8_t flags) {
    auto f = packet::Builder().ipv4("198.18.0.1", "192.0.2.1").ttl(ttl).tcp(1, 2, flags).build();
    f[14 + 2] = static_cast<uint8_t>(len >> 8);
    f[14 + 3] = static_cast<uint8_t>(len);
    return f;
  };
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; trial++) {
    int k = rng() % RL_DEFAULT_MAX_RULES;
    uint16_t len = static_cast<uint16_t>(len_of(k) + rng() % 16);
    uint8_t ttl = static_cast<uint8_t>(k % 200 + rng() % 56);
    uint8_t flags = k % 2 ? packet::kRst : packet::kAck | packet::kPsh;
    ASSERT_EQ(send(frame(len, ttl, flags)).rule_pos, k) << "len " << len << " ttl " << int(ttl);
    ASSERT_EQ(send(frame(len, static_cast<uint8_t>(k % 200 + 56), flags)).rule_pos, -1);
    ASSERT_EQ(send(frame(len, ttl, packet::kAck | packet::kRst)).rule_pos, -1);
  }
  EXPECT_EQ(send(frame(len_of(1023), 1023 % 200, packet::kRst)).rule_pos, 1023);
}

// A data path sized for the most rules rld.yaml may ask for: the verifier accepts the program with
// its bitmaps' largest shape, and the walk over summary words finds rules in every word.
class MostRulesTest : public BpfTest {
  void options(LoadOptions& o) override { o.max_rules = RL_MAX_RULES_CAP; }
};

TEST_F(MostRulesTest, EveryWordOfSixteenThousandRules) {
  policy::Policy p;
  // Set s holds 198.18.s.0/24. Rules 2j and 2j + 1 share port 1000 + j and need sets 2j % 100
  // and (2j + 1) % 100: a source of either set matches its own rule, whichever word it is in.
  for (int s = 0; s < 100; s++) {
    policy::SourceSet set;
    set.name = "set" + std::to_string(s);
    set.prefixes.push_back(*Prefix::parse("198.18." + std::to_string(s) + ".0/24"));
    p.sets.push_back(set);
  }
  for (int k = 0; k < RL_MAX_RULES_CAP; k++) {
    auto r = token_bucket("rule" + std::to_string(k), 100, 100);
    r.match.sources = {"set" + std::to_string(k % 100)};
    r.match.ports = {{static_cast<uint16_t>(1000 + k / 2), static_cast<uint16_t>(1000 + k / 2)}};
    r.priority = k;
    p.rules.push_back(r);
  }
  apply(p);
  if (HasFatalFailure()) return;
  auto from = [](int k) { return "198.18." + std::to_string(k % 100) + ".7"; };
  std::mt19937 rng(7);
  std::vector<int> ks = {
      0, 1, 63, 64, 4095, 4096, 8191, RL_MAX_RULES_CAP - 2, RL_MAX_RULES_CAP - 1};
  for (int trial = 0; trial < 200; trial++)
    ks.push_back(static_cast<int>(rng() % RL_MAX_RULES_CAP));
  for (int k : ks) {
    const auto port = static_cast<uint16_t>(1000 + k / 2);
    ASSERT_EQ(send(udp4(from(k), port)).rule_pos, k) << "rule " << k;
    ASSERT_EQ(send(udp4("198.18.200.1", port)).rule_pos, -1) << "rule " << k;
  }
}

}  // namespace
}  // namespace rl::testing
