// SPDX-License-Identifier: GPL-2.0-only
// Rule selection: allow/deny lists, priority, source sets and destinations; the key each kind of
// rule limits on; generation switches; and the counters every decision leaves.
#include <vector>

#include "match_fixture.h"

namespace rl::testing {
namespace {

using packet::Builder;

TEST_F(MatchTest, AllowAndDenyMostSpecificWins) {
  policy::Policy p;
  p.deny = {P("198.18.0.0/15"), P("2001:db8:bad::/48")};
  p.allow = {P("198.18.5.0/24"), P("2001:db8:bad:1::/64")};
  p.deny.push_back(P("198.18.5.7/32"));
  p.rules = {token_bucket("all", 1, 1)};
  apply(p);
  EXPECT_EQ(send(udp4("198.18.9.9")).reason, RL_REASON_DENYLIST);
  EXPECT_EQ(send(udp4("198.18.9.9")).verdict, XDP_DROP);
  EXPECT_EQ(send(udp4("198.18.5.1")).reason, RL_REASON_ALLOWLIST);
  EXPECT_EQ(send(udp4("198.18.5.7")).reason, RL_REASON_DENYLIST);
  auto v6 = [](const char* s) { return Builder().ipv6(s, "2001:db8::1").udp(1, 53).build(); };
  EXPECT_EQ(send(v6("2001:db8:bad:2::1")).reason, RL_REASON_DENYLIST);
  EXPECT_EQ(send(v6("2001:db8:bad:1::1")).reason, RL_REASON_ALLOWLIST);
  // Allow-listed traffic is never limited, however much of it there is.
  EXPECT_EQ(passed(udp4("198.18.5.1"), 50), 50);
  EXPECT_EQ(global(RL_GC_ALLOWLISTED), 52u);
  EXPECT_EQ(global(RL_GC_DENYLISTED), 4u);
}

TEST_F(MatchTest, FirstRuleByPriorityDecides) {
  policy::Policy p;
  p.sets = {set("lab", {"198.18.0.0/16"})};
  auto wide = token_bucket("wide", 100, 100);
  wide.priority = 20;
  auto narrow = token_bucket("narrow", 1, 1);
  narrow.priority = 10;
  narrow.match.sources = {"lab"};
  auto late = token_bucket("late", 1, 1);
  late.priority = 30;
  p.rules = {wide, late, narrow};
  apply(p);
  ASSERT_EQ(compiled_.names[0], "narrow");
  EXPECT_EQ(send(udp4("198.18.1.1")).rule_pos, 0);
  EXPECT_EQ(send(udp4("198.19.1.1")).rule_pos, 1);
}

TEST_F(MatchTest, SourceSetsOverlapAndFlatten) {
  policy::Policy p;
  p.sets = {set("big", {"198.18.0.0/15", "2001:db8::/32"}), set("small", {"198.18.7.0/24"}),
            set("host", {"198.18.7.7"})};
  auto a = token_bucket("host-rule", 10, 10);
  a.match.sources = {"host"};
  a.match.protocol = 6;
  auto b = token_bucket("small-rule", 10, 10);
  b.match.sources = {"small"};
  b.match.protocol = 17;
  auto c = token_bucket("big-rule", 10, 10);
  c.match.sources = {"big"};
  p.rules = {a, b, c};
  apply(p);
  // 198.18.7.7 is in all three sets: protocol picks among them.
  EXPECT_EQ(send(tcp4("198.18.7.7", 1, packet::kAck)).rule_pos, 0);
  EXPECT_EQ(send(udp4("198.18.7.7")).rule_pos, 1);
  EXPECT_EQ(send(tcp4("198.18.7.8", 1, packet::kAck)).rule_pos, 2);
  EXPECT_EQ(send(udp4("198.18.7.8")).rule_pos, 1);
  EXPECT_EQ(send(udp4("198.18.8.8")).rule_pos, 2);
  EXPECT_EQ(send(udp4("203.0.113.1")).rule_pos, -1);
  EXPECT_EQ(send(Builder().ipv6("2001:db8:1::1", "2001:db8::1").udp(1, 2).build()).rule_pos, 2);
  EXPECT_EQ(send(Builder().ipv6("2001:db9::1", "2001:db8::1").udp(1, 2).build()).rule_pos, -1);
}

TEST_F(MatchTest, Destinations) {
  policy::Policy p;
  auto vip = token_bucket("vip-web", 10, 10);
  vip.match.destinations = {P("192.0.2.10"), P("3fff:0:0:1::/64")};
  vip.match.protocol = 6;
  auto net = token_bucket("lab-net", 10, 10);
  net.match.destinations = {P("192.0.2.0/24")};
  auto host_in_net = token_bucket("host-in-net", 10, 10);
  host_in_net.match.destinations = {P("192.0.2.77")};
  host_in_net.match.protocol = 17;
  p.rules = {vip, net, host_in_net};
  apply(p);
  auto to4 = [](const char* dst, bool tcp) {
    Builder b;
    b.ipv4("198.18.0.1", dst);
    return tcp ? b.tcp(1000, 80, packet::kAck).build() : b.udp(1000, 53).build();
  };
  auto to6 = [](const char* dst) {
    return Builder().ipv6("2001:db8::1", dst).tcp(1000, 80, packet::kAck).build();
  };
  EXPECT_EQ(send(to4("192.0.2.10", true)).rule_pos, 0);
  EXPECT_EQ(send(to4("192.0.2.10", false)).rule_pos, 1) << "the /24 covers the VIP too";
  EXPECT_EQ(send(to4("192.0.2.11", true)).rule_pos, 1);
  EXPECT_EQ(send(to4("192.0.2.77", false)).rule_pos, 1) << "lab-net comes first";
  EXPECT_EQ(send(to4("192.0.3.10", true)).rule_pos, -1);
  EXPECT_EQ(send(to6("3fff:0:0:1::abcd")).rule_pos, 0);
  EXPECT_EQ(send(to6("3fff:0:0:2::1")).rule_pos, -1);
  // An IPv4 destination list does not match IPv6 packets whose bits happen to agree.
  EXPECT_EQ(send(to6("c000:20a::")).rule_pos, -1);
  EXPECT_EQ(compiled_.config.dst_lpm[0], 1);
  EXPECT_EQ(compiled_.config.dst_lpm[1], 1);
}

TEST_F(MatchTest, NoDestinationRulesSkipTheLookup) {
  policy::Policy p;
  auto v4_only = token_bucket("v4-vip", 10, 10);
  v4_only.match.destinations = {P("192.0.2.10")};
  auto rest = token_bucket("rest", 10, 10);
  p.rules = {v4_only, rest};
  apply(p);
  EXPECT_EQ(compiled_.config.dst_lpm[0], 1);
  EXPECT_EQ(compiled_.config.dst_lpm[1], 0) << "no IPv6 destination: no IPv6 lookup";
  EXPECT_EQ(send(Builder().ipv6("2001:db8::1", "3fff::1").udp(1, 2).build()).rule_pos, 1);
  EXPECT_EQ(send(Builder().ipv4("198.18.0.1", "192.0.2.10").udp(1, 2).build()).rule_pos, 0);
  EXPECT_EQ(send(Builder().ipv4("198.18.0.1", "192.0.2.11").udp(1, 2).build()).rule_pos, 1);
}

TEST_F(MatchTest, DestinationKeys) {
  policy::Policy p;
  auto per_dst = token_bucket("per-destination", 1, 2);
  per_dst.match.ports = {{1, 1}};
  per_dst.key = policy::KeyKind::kDestinationAddress;
  auto per_dst_prefix = token_bucket("per-destination-prefix", 1, 2);
  per_dst_prefix.match.ports = {{2, 2}};
  per_dst_prefix.key = policy::KeyKind::kDestinationPrefix;
  per_dst_prefix.v4_prefix = 24;
  per_dst_prefix.v6_prefix = 64;
  auto pair = token_bucket("per-pair", 1, 2);
  pair.match.ports = {{3, 3}};
  pair.key = policy::KeyKind::kSourceDestination;
  p.rules = {per_dst, per_dst_prefix, pair};
  apply(p);
  auto f4 = [](const char* src, const char* dst, uint16_t port) {
    return Builder().ipv4(src, dst).udp(1000, port).build();
  };
  auto f6 = [](const char* src, const char* dst, uint16_t port) {
    return Builder().ipv6(src, dst).udp(1000, port).build();
  };
  EXPECT_EQ(
      passed(f4("198.18.0.1", "192.0.2.1", 1), 1) + passed(f4("198.18.9.9", "192.0.2.1", 1), 5), 2)
      << "every source shares the destination's bucket";
  EXPECT_EQ(passed(f4("198.18.0.1", "192.0.2.2", 1), 5), 2) << "another destination, own bucket";

  EXPECT_EQ(
      passed(f4("198.18.0.1", "192.0.2.1", 2), 1) + passed(f4("198.18.0.2", "192.0.2.200", 2), 5),
      2)
      << "one destination /24 shares a bucket";
  EXPECT_EQ(passed(f4("198.18.0.1", "192.0.3.1", 2), 5), 2);
  EXPECT_EQ(passed(f6("2001:db8::1", "3fff:0:0:1::1", 2), 1) +
                passed(f6("2001:db8::2", "3fff:0:0:1:ffff::9", 2), 5),
            2)
      << "one destination /64 shares a bucket";

  EXPECT_EQ(passed(f4("198.18.0.1", "192.0.2.1", 3), 5), 2);
  EXPECT_EQ(passed(f4("198.18.0.2", "192.0.2.1", 3), 5), 2) << "another source, own pair";
  EXPECT_EQ(passed(f4("198.18.0.1", "192.0.2.2", 3), 5), 2) << "another destination, own pair";
  EXPECT_EQ(passed(f6("2001:db8:0:1::1", "3fff:0:0:1::1", 3), 1) +
                passed(f6("2001:db8:0:1::2", "3fff:0:0:1::2", 3), 5),
            2)
      << "IPv6 pairs are keyed by the /64 of each side";
  EXPECT_EQ(passed(f6("2001:db8:0:2::1", "3fff:0:0:1::1", 3), 5), 2);
  EXPECT_EQ(passed(f6("2001:db8:0:1::1", "3fff:0:0:2::1", 3), 5), 2);
}

TEST_F(MatchTest, KeyKinds) {
  policy::Policy p;
  auto per_src = token_bucket("per-source", 1, 2);
  per_src.match.ports = {{1, 1}};
  auto per_prefix = token_bucket("per-prefix", 1, 2);
  per_prefix.match.ports = {{2, 2}};
  per_prefix.key = policy::KeyKind::kSourcePrefix;
  per_prefix.v4_prefix = 24;
  per_prefix.v6_prefix = 64;
  auto per_port = token_bucket("per-port", 1, 2);
  per_port.match.ports = {{10, 11}};
  per_port.key = policy::KeyKind::kSourceAddressPort;
  auto aggregate = token_bucket("aggregate", 1, 2);
  aggregate.match.ports = {{3, 3}};
  aggregate.key = policy::KeyKind::kRule;
  p.rules = {per_src, per_prefix, per_port, aggregate};
  apply(p);

  EXPECT_EQ(passed(udp4("198.18.0.1", 1), 5), 2);
  EXPECT_EQ(passed(udp4("198.18.0.2", 1), 5), 2) << "another source has its own bucket";

  EXPECT_EQ(passed(udp4("198.18.0.1", 2), 1) + passed(udp4("198.18.0.200", 2), 5), 2)
      << "one /24 shares a bucket";
  EXPECT_EQ(passed(udp4("198.18.1.1", 2), 5), 2);
  auto v6 = [](const char* s) { return Builder().ipv6(s, "2001:db8::1").udp(9, 2).build(); };
  EXPECT_EQ(passed(v6("2001:db8:0:1::1"), 1) + passed(v6("2001:db8:0:1:ffff::9"), 5), 2)
      << "one /64 shares a bucket";

  EXPECT_EQ(passed(udp4("198.18.0.1", 10), 5), 2);
  EXPECT_EQ(passed(udp4("198.18.0.1", 11), 5), 2) << "another port has its own bucket";

  EXPECT_EQ(passed(udp4("198.18.0.1", 3), 1) + passed(udp4("203.0.113.9", 3), 5), 2)
      << "the whole rule shares one bucket";
}

TEST_F(MatchTest, GenerationSwitchKeepsStateOfUnchangedRules) {
  policy::Policy p;
  auto keep = token_bucket("keep", 1, 3);
  keep.match.ports = {{1, 1}};
  auto change = token_bucket("change", 1, 3);
  change.match.ports = {{2, 2}};
  p.rules = {keep, change};
  apply(p);
  uint32_t gen = dp_->active_generation();
  EXPECT_EQ(passed(udp4("198.18.0.1", 1), 3), 3);
  EXPECT_EQ(passed(udp4("198.18.0.1", 2), 3), 3);

  // Same "keep", new limiter for "change", and a new rule in front.
  p.rules[1].limit.burst = 4;
  auto front = token_bucket("front", 1, 1);
  front.match.ports = {{3, 3}};
  front.priority = -5;
  p.rules.push_back(front);
  apply(p);
  EXPECT_NE(dp_->active_generation(), gen);
  EXPECT_EQ(passed(udp4("198.18.0.1", 1), 3), 0) << "unchanged rule keeps its exhausted bucket";
  EXPECT_EQ(passed(udp4("198.18.0.1", 2), 5), 4) << "changed limiter starts fresh";
  EXPECT_EQ(send(udp4("198.18.0.1", 3)).rule_pos, 0);
  EXPECT_EQ(counters("keep").matched_pkts, 6u) << "counters continue across reloads";

  // Removing every rule leaves nothing matched.
  apply(policy::Policy{});
  EXPECT_EQ(send(udp4("198.18.0.1", 1)).reason, RL_REASON_UNMATCHED);
}

TEST_F(MatchTest, CountersAgreeWithDecisions) {
  policy::Policy p;
  auto r = token_bucket("r", 1, 3);
  p.rules = {r};
  apply(p);
  auto f = udp4("198.18.0.1");
  for (int i = 0; i < 10; i++) send(f);
  auto c = counters("r");
  EXPECT_EQ(c.matched_pkts, 10u);
  EXPECT_EQ(c.passed_pkts, 3u);
  EXPECT_EQ(c.dropped_pkts, 7u);
  EXPECT_EQ(c.matched_bytes, 10 * f.size());
  EXPECT_EQ(c.dropped_bytes, 7 * f.size());
  EXPECT_EQ(global(RL_GC_RX), 10u);
  EXPECT_EQ(global(RL_GC_KEY_INSERTED), 1u);
}

}  // namespace
}  // namespace rl::testing
