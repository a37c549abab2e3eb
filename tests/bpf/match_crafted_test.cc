// SPDX-License-Identifier: GPL-2.0-only
// Crafted packets (odd headers a parser gives up on or skips), which must never get past a deny
// list or a rule that matches on addresses alone.
#include <string>
#include <vector>

#include "fixture.h"

namespace rl::testing {
namespace {

using packet::Builder;

// A packet an attacker shapes so that the parser gives up on its transport, or skips a part of
// it. `port80` is whether its TCP or UDP destination port 80 is visible.
struct Crafted {
  std::string what;
  std::vector<uint8_t> frame;
  bool no_l4;  // counted malformed, though its source is known
  bool port80;
};

// Every kind, from IPv4 source `s4` and IPv6 source `s6`. ICMP errors quote a datagram from
// 198.18.77.7 / 2001:db8:77::7, which the tests put on the allow list: only the outer source
// counts.
std::vector<Crafted> crafted(const std::string& s4, const std::string& s6) {
  const std::string d4 = "192.0.2.1", d6 = "2001:db8::1";
  std::vector<Crafted> out;
  auto add = [&](std::string what, std::vector<uint8_t> f, bool no_l4, bool port80 = false) {
    out.push_back({std::move(what), std::move(f), no_l4, port80});
  };
  auto chain = [&](std::initializer_list<std::pair<uint8_t, uint8_t>> ext) {
    Builder b;
    b.ipv6(s6, d6);
    for (auto [type, len8] : ext) b.ipv6_ext(type, len8);
    return b;
  };

  Builder longer;
  longer.ipv6(s6, d6);
  for (int i = 0; i <= RL_IPV6_MAX_EXT_HDRS; i++) longer.ipv6_ext(60);
  add("IPv6 extension headers beyond the walk", longer.tcp(1, 80, packet::kSyn).build(), true);
  add("IPv6 AH and routing headers beyond the walk",
      chain({{0, 0}, {43, 1}, {51, 2}, {60, 0}, {60, 0}, {43, 0}, {60, 0}}).udp(1, 80).build(),
      true);
  auto cut = chain({{0, 2}, {60, 2}, {43, 2}}).udp(1, 80).build();
  cut.resize(14 + 40 + 24 + 10);
  add("IPv6 chain cut inside a header", cut, true);
  auto lying = chain({{0, 0}, {60, 0}}).udp(1, 80).payload(40).build();
  lying[14 + 40 + 8 + 1] = 255;  // the second header claims 2 KiB
  add("IPv6 extension header longer than the frame", lying, true);
  // RFC 7112 wants the whole chain and the transport header in the first fragment; an attacker
  // puts the transport in the next one.
  auto first6 = chain({{0, 0}}).fragment(0, true).tcp(1, 80, packet::kSyn).build();
  first6.resize(14 + 40 + 8 + 8);
  add("IPv6 first fragment without its transport header", first6, true);
  auto tiny = Builder().ipv4(s4, d4).fragment(0, true).tcp(1, 80, packet::kSyn).build();
  tiny.resize(14 + 20 + 8);
  add("IPv4 first fragment with half a TCP header", tiny, true);
  auto doff = Builder().ipv4(s4, d4).tcp(1, 80, packet::kSyn).build();
  doff[14 + 20 + 12] = 0x20;
  add("TCP data offset 2", doff, true);
  auto udp6 = Builder().ipv6(s6, d6).udp(1, 80).build();
  udp6.resize(14 + 40 + 4);
  add("IPv6 UDP header cut short", udp6, true);
  auto icmp6 = Builder().ipv6(s6, d6).icmp(128).build();
  icmp6.resize(14 + 40 + 2);
  add("ICMPv6 header cut short", icmp6, true);

  add("IPv4 later fragment",
      Builder().ipv4(s4, d4).fragment(100, false).tcp(1, 80, packet::kSyn).payload(64).build(),
      false);
  add("IPv6 later fragment behind hop-by-hop",
      chain({{0, 0}}).fragment(50, false).udp(1, 80).payload(64).build(), false);
  add("IPv6 later fragment declaring an extension header",
      Builder().ipv6(s6, d6).fragment(50, true).l4_protocol(60).payload(64).build(), false);
  add("IPv4 with 40 bytes of options",
      Builder().ipv4(s4, d4).ipv4_options(10).tcp(1, 80, packet::kSyn).build(), false, true);

  auto quoted4 = Builder().ipv4("198.18.77.7", s4).tcp(80, 1, packet::kSyn).build();
  quoted4 = {quoted4.begin() + 14, quoted4.begin() + 14 + 28};
  add("ICMP error quoting an allow-listed source",
      Builder().ipv4(s4, d4).icmp(3, 3).payload(quoted4).build(), false);
  auto quoted6 = Builder().ipv6("2001:db8:77::7", s6).udp(80, 1).build();
  quoted6 = {quoted6.begin() + 14, quoted6.begin() + 14 + 48};
  add("ICMPv6 error quoting an allow-listed source",
      Builder().ipv6(s6, d6).icmp(1, 4).payload(quoted6).build(), false);

  Builder q3, q8;
  for (int i = 0; i < 3; i++) q3.vlan(i + 1);
  for (int i = 0; i < RL_VLAN_MAX_TAGS; i++) q8.vlan(i + 1, 0x88a8);
  add("IPv4 behind 3 VLAN tags", q3.ipv4(s4, d4).tcp(1, 80, packet::kSyn).build(), false, true);
  add("IPv6 behind the deepest VLAN stack walked", q8.ipv6(s6, d6).udp(1, 80).build(), false, true);
  return out;
}

class CraftedTest : public BpfTest {
 protected:
  // Lists and two rules: a port rule first, then one on addresses alone.
  policy::Policy policy(policy::Verdict malformed) {
    policy::Policy p;
    p.malformed = malformed;
    p.deny = {P("198.18.66.0/24"), P("2001:db8:66::/48")};
    p.allow = {P("198.18.77.0/24"), P("2001:db8:77::/48")};
    p.sets = {set("lab", {"198.18.10.0/24", "2001:db8:10::/48"})};
    auto web = token_bucket("web", 1000, 1000);
    web.match.ports = {{80, 80}};
    web.priority = 1;
    auto lab = token_bucket("lab", 1, 2);
    lab.match.sources = {"lab"};
    lab.priority = 2;
    p.rules = {web, lab};
    return p;
  }
};

// The bypass this guards against: with `malformed: pass`, extension headers used to take a
// packet past everything. Lists decide before what could not be parsed, both ways.
TEST_F(CraftedTest, ListsDecideEveryCraftedPacket) {
  apply(policy(policy::Verdict::kPass));
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.67.0/24"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:67::/48"), RL_SRC_F_DENY, 0).ok());
  uint64_t no_l4 = 0, kinds = 0;
  for (const auto& c : crafted("198.18.66.1", "2001:db8:66::1")) {
    kinds++;
    auto d = send(c.frame);
    EXPECT_EQ(d.reason, RL_REASON_DENYLIST) << c.what;
    EXPECT_EQ(d.verdict, XDP_DROP) << c.what;
    no_l4 += c.no_l4;
  }
  for (const auto& c : crafted("198.18.67.1", "2001:db8:67::1")) {
    auto d = send(c.frame);
    EXPECT_EQ(d.reason, RL_REASON_RUNTIME_DENY) << c.what;
    EXPECT_EQ(d.verdict, XDP_DROP) << c.what;
    no_l4 += c.no_l4;
  }
  for (const auto& c : crafted("198.18.77.1", "2001:db8:77::1")) {
    auto d = send(c.frame);
    EXPECT_EQ(d.reason, RL_REASON_ALLOWLIST) << c.what;
    EXPECT_EQ(d.verdict, XDP_PASS) << c.what;
    no_l4 += c.no_l4;
  }
  EXPECT_EQ(no_l4, 27u);
  EXPECT_EQ(global(RL_GC_MALFORMED), no_l4) << "still counted malformed";
  EXPECT_EQ(global(RL_GC_DENYLISTED), kinds);
  EXPECT_EQ(global(RL_GC_RUNTIME_DENIED), kinds);
}

// A rule on addresses alone limits every crafted packet; each kind gets its own source (IPv6:
// its own /64, the client a per-source key counts), so its own bucket of 2.
TEST_F(CraftedTest, AddressRulesLimitEveryCraftedPacket) {
  apply(policy(policy::Verdict::kPass));
  size_t n = crafted("198.18.10.1", "2001:db8:10::1").size();
  for (size_t i = 0; i < n; i++) {
    std::string host = std::to_string(i + 1);
    const auto c = crafted("198.18.10." + host, "2001:db8:10:" + host + "::1")[i];
    int lab = 0, limited = 0;
    for (int k = 0; k < 4; k++) {
      auto d = send(c.frame);
      if (c.port80) {
        EXPECT_EQ(d.rule_pos, 0) << c.what << ": its port is there to see";
        continue;
      }
      lab += d.rule_pos == 1;
      limited += d.reason == RL_REASON_LIMITED && d.verdict == XDP_DROP;
    }
    if (!c.port80) {
      EXPECT_EQ(lab, 4) << c.what;
      EXPECT_EQ(limited, 2) << c.what;
    }
  }
}

// No rule guesses a port it cannot see. What no list or rule decides gets the malformed verdict
// if its transport was not parsed, drop by default; later fragments and ICMP errors are simply
// unmatched.
TEST_F(CraftedTest, UndecidedCraftedPacketsGetTheMalformedVerdict) {
  for (auto verdict : {policy::Verdict::kDrop, policy::Verdict::kPass}) {
    apply(policy(verdict));
    for (const auto& c : crafted("198.18.30.1", "2001:db8:30::1")) {
      auto d = send(c.frame);
      if (c.port80) {
        EXPECT_EQ(d.rule_pos, 0) << c.what;
      } else if (c.no_l4) {
        EXPECT_EQ(d.reason, RL_REASON_MALFORMED) << c.what;
        EXPECT_EQ(d.verdict, verdict == policy::Verdict::kDrop ? XDP_DROP : XDP_PASS) << c.what;
      } else {
        EXPECT_EQ(d.reason, RL_REASON_UNMATCHED) << c.what;
      }
    }
  }
}

// A VLAN stack deeper than the walk hides the source: such a frame gets the malformed verdict,
// drop by default, whatever its source; one tag less and the lists and rules judge it.
TEST_F(CraftedTest, VlanStacksBeyondTheWalkDropByDefault) {
  policy::Policy p = policy(policy::Verdict::kDrop);
  p.malformed = policy::Policy{}.malformed;
  apply(p);
  for (const char* src : {"198.18.66.1", "198.18.10.1", "198.18.77.1"}) {
    Builder deeper, deepest;
    for (int i = 0; i <= RL_VLAN_MAX_TAGS; i++) deeper.vlan(i + 1);
    for (int i = 0; i < RL_VLAN_MAX_TAGS; i++) deepest.vlan(i + 1);
    auto d = send(deeper.ipv4(src, "192.0.2.1").udp(1, 53).build());
    EXPECT_EQ(d.reason, RL_REASON_MALFORMED) << src;
    EXPECT_EQ(d.verdict, XDP_DROP) << src;
    d = send(deepest.ipv4(src, "192.0.2.1").udp(1, 53).build());
    EXPECT_NE(d.reason, RL_REASON_MALFORMED) << src;
  }
  Builder deny;
  for (int i = 0; i < RL_VLAN_MAX_TAGS; i++) deny.vlan(i + 1);
  EXPECT_EQ(send(deny.ipv4("198.18.66.1", "192.0.2.1").udp(1, 53).build()).reason,
            RL_REASON_DENYLIST);
}

// ICMP errors are judged by their own (outer) source: a quoted deny-listed address does not
// get an innocent sender dropped, nor does a quoted allow-listed one get a sender through.
TEST_F(CraftedTest, IcmpErrorsAreJudgedByTheirOuterSource) {
  apply(policy(policy::Verdict::kDrop));
  auto quoted = Builder().ipv4("198.18.66.9", "198.18.30.1").udp(53, 1).build();
  quoted = {quoted.begin() + 14, quoted.begin() + 14 + 28};
  auto icmp = [&](const char* src) {
    return send(Builder().ipv4(src, "192.0.2.1").icmp(11).payload(quoted).build());
  };
  EXPECT_EQ(icmp("198.18.30.1").reason, RL_REASON_UNMATCHED);
  EXPECT_EQ(icmp("198.18.66.1").reason, RL_REASON_DENYLIST);
}

}  // namespace
}  // namespace rl::testing
