// SPDX-License-Identifier: GPL-2.0-only
// Parsing through the real program: every header the data path understands, and frames cut
// short at every length, which must be counted as malformed and never read out of bounds.
// What crafted packets must not get past (lists, address rules): match_crafted_test.cc.
#include "fixture.h"

namespace rl::testing {
namespace {

using packet::Builder;

class ParseTest : public BpfTest {
 protected:
  void SetUp() override {
    BpfTest::SetUp();
    // One rule per L4 shape, so the matched rule shows what the parser extracted.
    policy::Policy p;
    auto r_tcp = token_bucket("tcp80", 1000, 1000);
    r_tcp.match.protocol = 6;
    r_tcp.match.ports = {{80, 80}};
    auto r_syn = token_bucket("tcp-syn", 1000, 1000);
    r_syn.match.protocol = 6;
    r_syn.match.tcp_syn = true;
    r_syn.priority = -1;
    auto r_udp = token_bucket("udp53", 1000, 1000);
    r_udp.match.protocol = 17;
    r_udp.match.ports = {{53, 53}};
    auto r_icmp = token_bucket("echo", 1000, 1000);
    r_icmp.match.protocol = 1;
    r_icmp.match.icmp_types = {8};
    auto r_icmp6 = token_bucket("echo6", 1000, 1000);
    r_icmp6.match.protocol = 58;
    r_icmp6.match.icmp_types = {128};
    auto r_frag = token_bucket("udp-any", 1000, 1000);
    r_frag.match.protocol = 17;
    r_frag.priority = 5;
    p.rules = {r_tcp, r_syn, r_udp, r_icmp, r_icmp6, r_frag};
    apply(p);
  }
  int pos(const std::string& name) {
    for (size_t i = 0; i < compiled_.names.size(); i++)
      if (compiled_.names[i] == name) return static_cast<int>(i);
    return -2;
  }
  void expect_rule(const std::vector<uint8_t>& f, const std::string& name) {
    auto d = send(f);
    EXPECT_EQ(d.reason, RL_REASON_ADMITTED);
    EXPECT_EQ(d.rule_pos, pos(name)) << "expected rule " << name;
  }
};

TEST_F(ParseTest, Ipv4Transports) {
  expect_rule(Builder().ipv4("198.18.0.1", "192.0.2.1").tcp(1234, 80, packet::kAck).build(),
              "tcp80");
  expect_rule(Builder().ipv4("198.18.0.1", "192.0.2.1").tcp(1234, 80, packet::kSyn).build(),
              "tcp-syn");
  expect_rule(Builder().ipv4("198.18.0.1", "192.0.2.1").udp(1234, 53).build(), "udp53");
  expect_rule(Builder().ipv4("198.18.0.1", "192.0.2.1").icmp(8).build(), "echo");
  EXPECT_EQ(send(Builder().ipv4("198.18.0.1", "192.0.2.1").icmp(0).build()).reason,
            RL_REASON_UNMATCHED);
  EXPECT_EQ(send(Builder().ipv4("198.18.0.1", "192.0.2.1").tcp(1, 81, packet::kAck).build()).reason,
            RL_REASON_UNMATCHED);
}

TEST_F(ParseTest, Ipv4OptionsAreSkipped) {
  expect_rule(Builder().ipv4("198.18.0.1", "192.0.2.1").ipv4_options(10).udp(1, 53).build(),
              "udp53");
}

TEST_F(ParseTest, Ipv6Transports) {
  expect_rule(Builder().ipv6("2001:db8::1", "2001:db8::2").tcp(1, 80, packet::kAck).build(),
              "tcp80");
  expect_rule(Builder().ipv6("2001:db8::1", "2001:db8::2").udp(1, 53).build(), "udp53");
  expect_rule(Builder().ipv6("2001:db8::1", "2001:db8::2").icmp(128).build(), "echo6");
}

TEST_F(ParseTest, VlanAndQinQ) {
  expect_rule(Builder().vlan(10).ipv4("198.18.0.1", "192.0.2.1").udp(1, 53).build(), "udp53");
  expect_rule(
      Builder().vlan(10, 0x88a8).vlan(20).ipv4("198.18.0.1", "192.0.2.1").udp(1, 53).build(),
      "udp53");
  expect_rule(
      Builder().vlan(10, 0x88a8).vlan(20).ipv6("2001:db8::1", "2001:db8::2").udp(1, 53).build(),
      "udp53");
  // Stacks as deep as Linux can untag are walked.
  Builder deepest;
  for (int i = 0; i < RL_VLAN_MAX_TAGS; i++) deepest.vlan(i + 1, i % 2 ? 0x8100 : 0x88a8);
  expect_rule(deepest.ipv6("2001:db8::1", "2001:db8::2").udp(1, 53).build(), "udp53");
  Builder arp;
  for (int i = 0; i < RL_VLAN_MAX_TAGS; i++) arp.vlan(i + 1);
  EXPECT_EQ(send(arp.ethertype(0x0806).build()).reason, RL_REASON_NON_IP);
}

// One tag more than the walk: what the frame carries is unknown, so it is malformed, not
// "non-IP", and takes the malformed verdict (drop unless the policy says pass).
TEST_F(ParseTest, VlanStackDeeperThanTheWalkIsMalformed) {
  Builder b;
  for (int i = 0; i <= RL_VLAN_MAX_TAGS; i++) b.vlan(i + 1);
  auto f = b.ipv4("198.18.0.1", "192.0.2.1").udp(1, 53).build();
  auto d = send(f);
  EXPECT_EQ(d.reason, RL_REASON_MALFORMED);
  EXPECT_EQ(d.verdict, XDP_DROP);
  EXPECT_EQ(global(RL_GC_MALFORMED), 1u);
  EXPECT_EQ(global(RL_GC_NON_IP), 0u);
}

TEST_F(ParseTest, Ipv6ExtensionHeaders) {
  expect_rule(Builder().ipv6("2001:db8::1", "2001:db8::2").ipv6_ext(0).udp(1, 53).build(), "udp53");
  expect_rule(Builder()
                  .ipv6("2001:db8::1", "2001:db8::2")
                  .ipv6_ext(0, 2)
                  .ipv6_ext(43, 1)
                  .ipv6_ext(60)
                  .udp(1, 53)
                  .build(),
              "udp53");
  Builder at_bound;
  at_bound.ipv6("2001:db8::1", "2001:db8::2");
  for (int i = 0; i < RL_IPV6_MAX_EXT_HDRS; i++) at_bound.ipv6_ext(60);
  expect_rule(at_bound.udp(1, 53).build(), "udp53");
  expect_rule(
      Builder().ipv6("2001:db8::1", "2001:db8::2").ipv6_ext(51, 2).ipv6_ext(43).icmp(128).build(),
      "echo6");
  // Longer than the walk: the transport is not guessed at. No rule here matches without a
  // protocol, so the malformed verdict decides.
  Builder chain;
  chain.ipv6("2001:db8::1", "2001:db8::2");
  for (int i = 0; i <= RL_IPV6_MAX_EXT_HDRS; i++) chain.ipv6_ext(60);
  auto d = send(chain.udp(1, 53).build());
  EXPECT_EQ(d.reason, RL_REASON_MALFORMED);
  EXPECT_EQ(d.verdict, XDP_DROP);
  EXPECT_EQ(global(RL_GC_MALFORMED), 1u);
}

TEST_F(ParseTest, FragmentsMatchWithoutPorts) {
  // First fragment: ports present.
  expect_rule(
      Builder().ipv4("198.18.0.1", "192.0.2.1").fragment(0, true).udp(1, 53).payload(100).build(),
      "udp53");
  // Later fragments: no ports, so only the protocol-only rule can match.
  expect_rule(Builder()
                  .ipv4("198.18.0.1", "192.0.2.1")
                  .fragment(100, false)
                  .udp(1, 53)
                  .payload(100)
                  .build(),
              "udp-any");
  expect_rule(
      Builder().ipv6("2001:db8::1", "2001:db8::2").fragment(0, true).udp(1, 53).payload(64).build(),
      "udp53");
  expect_rule(Builder()
                  .ipv6("2001:db8::1", "2001:db8::2")
                  .ipv6_ext(0)
                  .fragment(50, false)
                  .udp(1, 53)
                  .payload(64)
                  .build(),
              "udp-any");
  // The walk stops at a later fragment's header: what follows is payload. The protocol is the
  // one declared, unknown if that is another extension header (so "udp-any" cannot match).
  expect_rule(Builder()
                  .ipv6("2001:db8::1", "2001:db8::2")
                  .fragment(50, false)
                  .l4_protocol(17)
                  .payload(64)
                  .build(),
              "udp-any");
  auto hidden = send(Builder()
                         .ipv6("2001:db8::1", "2001:db8::2")
                         .fragment(50, false)
                         .l4_protocol(60)
                         .payload(64)
                         .build());
  EXPECT_EQ(hidden.reason, RL_REASON_UNMATCHED);
  EXPECT_EQ(global(RL_GC_MALFORMED), 0u) << "a later fragment is not malformed";
  // A TCP fragment cannot be a new connection: SYN-only rules do not match it.
  auto d = send(Builder()
                    .ipv4("198.18.0.1", "192.0.2.1")
                    .fragment(10, false)
                    .tcp(1, 80, packet::kSyn)
                    .build());
  EXPECT_EQ(d.reason, RL_REASON_UNMATCHED);
  EXPECT_EQ(global(RL_GC_FRAGMENTS), 5u);
}

TEST_F(ParseTest, NonIpPasses) {
  auto d = send(Builder().ethertype(0x0806).build());
  EXPECT_EQ(d.reason, RL_REASON_NON_IP);
  EXPECT_EQ(d.verdict, XDP_PASS);
  EXPECT_EQ(global(RL_GC_NON_IP), 1u);
}

// Every prefix of a valid frame that cuts into a header must be counted malformed, never a crash
// or a decision based on bytes that are not there: once the source is known, only a rule that
// needs no port ("udp-any") may match; otherwise the malformed verdict (drop) decides.
TEST_F(ParseTest, TruncatedAtEveryLength) {
  struct Case {
    std::vector<uint8_t> frame;
    size_t headers;  // bytes the parser needs
  };
  std::vector<Case> cases = {
      {Builder()
           .vlan(5)
           .ipv4("198.18.0.1", "192.0.2.1")
           .ipv4_options(2)
           .tcp(1, 80, packet::kAck)
           .build(),
       14 + 4 + 28 + 20},
      {Builder().ipv4("198.18.0.1", "192.0.2.1").udp(1, 53).build(), 14 + 20 + 8},
      {Builder()
           .ipv6("2001:db8::1", "2001:db8::2")
           .ipv6_ext(0, 1)
           .fragment(0, true)
           .udp(1, 53)
           .build(),
       14 + 40 + 16 + 8 + 8},
      {Builder().ipv6("2001:db8::1", "2001:db8::2").icmp(128).build(), 14 + 40 + 4},
  };
  uint64_t cut = 0;
  for (const auto& c : cases) {
    for (size_t len = 14; len < c.frame.size(); len++) {
      std::vector<uint8_t> f(c.frame.begin(), c.frame.begin() + len);
      auto r = dp_->run(f);
      ASSERT_TRUE(r.ok());
      auto d = dp_->last_decision();
      if (len >= c.headers) {
        EXPECT_NE(d.reason, RL_REASON_MALFORMED) << "length " << len;
        continue;
      }
      cut++;
      if (d.reason == RL_REASON_MALFORMED)
        EXPECT_EQ(d.verdict, XDP_DROP) << "length " << len;
      else
        EXPECT_EQ(d.rule_pos, pos("udp-any")) << "length " << len;
    }
  }
  EXPECT_EQ(cut, 52u + 28 + 72 + 44);
  EXPECT_EQ(global(RL_GC_MALFORMED), cut);
}

TEST_F(ParseTest, NonsenseHeaders) {
  auto f = Builder().ipv4("198.18.0.1", "192.0.2.1").udp(1, 53).build();
  f[14] = 0x43;  // IHL 3
  EXPECT_EQ(send(f).reason, RL_REASON_MALFORMED);
  f[14] = 0x65;  // version 6 in an IPv4 ethertype
  EXPECT_EQ(send(f).reason, RL_REASON_MALFORMED);
  f = Builder().ipv4("198.18.0.1", "192.0.2.1").udp(1, 53).build();
  f[16] = 0;
  f[17] = 4;  // total length shorter than the header
  EXPECT_EQ(send(f).reason, RL_REASON_MALFORMED);
  f = Builder().ipv4("198.18.0.1", "192.0.2.1").ipv4_options(10).udp(1, 53).build();
  f[14] = 0x4f;  // IHL 15 but the frame is cut right after the options... still fits; cut it
  f.resize(14 + 40);
  EXPECT_EQ(send(f).reason, RL_REASON_MALFORMED);
  f = Builder().ipv4("198.18.0.1", "192.0.2.1").tcp(1, 80, packet::kAck).build();
  f[14 + 20 + 12] = 0x20;  // TCP data offset 2
  EXPECT_EQ(send(f).reason, RL_REASON_MALFORMED);

  std::mt19937 rng(7);
  for (int i = 0; i < 2000; i++) {
    std::vector<uint8_t> junk(14 + rng() % 120);
    for (auto& b : junk) b = rng();
    if (i % 2) {  // make half of them claim to be IP
      junk[12] = (i % 4 == 1) ? 0x08 : 0x86;
      junk[13] = (i % 4 == 1) ? 0x00 : 0xdd;
    }
    ASSERT_TRUE(dp_->run(junk).ok());
  }
}

// More extension headers than the walk covers cannot carry a denied source around the deny list,
// and what no list or rule decides gets the policy's default malformed verdict, drop.
TEST_F(ParseTest, OverlongExtensionChainsDropByDefault) {
  policy::Policy p;  // malformed: not given
  p.deny = {P("2001:db8:bad::/48")};
  p.rules = {token_bucket("web", 10, 10)};
  p.rules[0].match.protocol = 6;
  p.rules[0].match.ports = {{80, 80}};
  apply(p);
  auto chain = [](const char* src) {
    Builder b;
    b.ipv6(src, "2001:db8::2");
    for (int i = 0; i <= RL_IPV6_MAX_EXT_HDRS; i++) b.ipv6_ext(60, 0);
    return b.tcp(1, 80, packet::kSyn).build();
  };
  auto d = send(chain("2001:db8:bad::1"));
  EXPECT_EQ(d.reason, RL_REASON_DENYLIST);
  EXPECT_EQ(d.verdict, XDP_DROP);
  d = send(chain("2001:db8:1::1"));
  EXPECT_EQ(d.reason, RL_REASON_MALFORMED) << "a port rule does not match an unknown transport";
  EXPECT_EQ(d.verdict, XDP_DROP);
}

TEST_F(ParseTest, MalformedVerdictIsConfigurable) {
  policy::Policy p;
  EXPECT_EQ(p.malformed, policy::Verdict::kDrop) << "the safe default";
  p.rules = {token_bucket("any", 10, 10)};
  apply(p);
  auto f = Builder().ipv4("198.18.0.1", "192.0.2.1").udp(1, 53).build();
  f.resize(14 + 10);
  auto d = send(f);
  EXPECT_EQ(d.reason, RL_REASON_MALFORMED);
  EXPECT_EQ(d.verdict, XDP_DROP);
  p.malformed = policy::Verdict::kPass;
  apply(p);
  d = send(f);
  EXPECT_EQ(d.reason, RL_REASON_MALFORMED);
  EXPECT_EQ(d.verdict, XDP_PASS);
}

}  // namespace
}  // namespace rl::testing
