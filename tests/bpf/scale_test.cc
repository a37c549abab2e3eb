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
  for (int k = 0; k < RL_MAX_RULES; k++) {
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
    int k = rng() % RL_MAX_RULES;
    int n = (k % 100) * 1000 + 2 * (rng() % 500) + 1;  // an IPv4 member (odd i)
    std::string src = "198." + std::to_string(18 + (n >> 16 & 1)) + "." +
                      std::to_string((n >> 8) & 255) + "." + std::to_string(n & 255);
    auto d = send(udp4(src, static_cast<uint16_t>(1000 + k)));
    ASSERT_EQ(d.rule_pos, k) << src << " port " << 1000 + k;
  }
  // The last rule, in the last bitmap word, is reachable too.
  EXPECT_EQ(send(udp4("198.18.1.0", 1000 + 1023)).rule_pos, -1);
}

}  // namespace
}  // namespace rl::testing
