// SPDX-License-Identifier: GPL-2.0-only
// Rule selection: allow/deny lists, priority, conditions, key kinds, generation switches; and
// crafted packets (odd headers a parser gives up on or skips), which must never get past a deny
// list or a rule that matches on addresses alone.
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "common/fd.h"
#include "datapath/pins.h"
#include "fixture.h"
#include "rl_hash.h"

namespace rl::testing {
namespace {

using packet::Builder;

class MatchTest : public BpfTest {
 protected:
  // One rule that admits everything: a packet's reason is then the runtime lists' or ADMITTED.
  void admit_all() {
    policy::Policy p;
    p.rules = {token_bucket("all", 1'000'000, 1'000'000)};
    apply(p);
  }
  // The runtime entries rld lists, expired ones included.
  size_t runtime_entries() const {
    auto listed = dp_->runtime_acl_list();
    EXPECT_TRUE(listed.ok());
    return listed.ok() ? listed->size() : 0;
  }
};

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

TEST_F(MatchTest, Conditions) {
  policy::Policy p;
  auto syn = token_bucket("syn-web", 10, 10);
  syn.match.protocol = 6;
  syn.match.ports = {{80, 80}, {443, 443}, {8000, 8100}};
  syn.match.tcp_syn = true;
  auto dns = token_bucket("dns", 10, 10);
  dns.match.protocol = 17;
  dns.match.ports = {{53, 53}};
  auto either = token_bucket("tcp-or-udp-9000", 10, 10);
  either.match.ports = {{9000, 9000}};
  auto ping = token_bucket("ping", 10, 10);
  ping.match.protocol = 1;
  ping.match.icmp_types = {8, 13};
  auto gre = token_bucket("gre", 10, 10);
  gre.match.protocol = 47;
  p.rules = {syn, dns, either, ping, gre};
  apply(p);
  auto rule = [&](const std::vector<uint8_t>& f) { return send(f).rule_pos; };
  EXPECT_EQ(rule(tcp4("198.18.0.1", 443, packet::kSyn)), 0);
  EXPECT_EQ(rule(tcp4("198.18.0.1", 8050, packet::kSyn)), 0);
  EXPECT_EQ(rule(tcp4("198.18.0.1", 8101, packet::kSyn)), -1);
  EXPECT_EQ(rule(tcp4("198.18.0.1", 443, packet::kSyn | packet::kAck)), -1);
  EXPECT_EQ(rule(tcp4("198.18.0.1", 443, packet::kAck)), -1);
  EXPECT_EQ(rule(udp4("198.18.0.1", 53)), 1);
  EXPECT_EQ(rule(tcp4("198.18.0.1", 53, packet::kAck)), -1);
  EXPECT_EQ(rule(udp4("198.18.0.1", 9000)), 2);
  EXPECT_EQ(rule(tcp4("198.18.0.1", 9000, packet::kAck)), 2);
  EXPECT_EQ(rule(Builder().ipv4("198.18.0.1", "192.0.2.1").icmp(13).build()), 3);
  EXPECT_EQ(rule(Builder().ipv4("198.18.0.1", "192.0.2.1").icmp(0).build()), -1);
  EXPECT_EQ(rule(Builder().ipv4("198.18.0.1", "192.0.2.1").l4_protocol(47).payload(20).build()), 4);
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

TEST_F(MatchTest, SourcePorts) {
  policy::Policy p;
  auto reflection = token_bucket("reflection", 10, 10);
  reflection.match.protocol = 17;
  reflection.match.source_ports = {{19, 19}, {53, 53}, {123, 123}, {1900, 1900}, {11211, 11211}};
  auto high = token_bucket("tcp-from-high-ports", 10, 10);
  high.match.source_ports = {{1024, 65535}};
  high.match.ports = {{80, 80}};
  p.rules = {reflection, high};
  apply(p);
  EXPECT_EQ(compiled_.config.sport_used, 1);
  auto udp_from = [](uint16_t sport, uint16_t dport) {
    return Builder().ipv4("198.18.0.1", "192.0.2.1").udp(sport, dport).build();
  };
  auto tcp_from = [](uint16_t sport, uint16_t dport) {
    return Builder().ipv4("198.18.0.1", "192.0.2.1").tcp(sport, dport, packet::kAck).build();
  };
  for (uint16_t s : {19, 53, 123, 1900, 11211})
    EXPECT_EQ(send(udp_from(s, 40000)).rule_pos, 0) << s;
  EXPECT_EQ(send(udp_from(54, 40000)).rule_pos, -1);
  EXPECT_EQ(send(tcp_from(53, 40000)).rule_pos, -1) << "protocol udp only";
  EXPECT_EQ(send(tcp_from(1024, 80)).rule_pos, 1);
  EXPECT_EQ(send(tcp_from(65535, 80)).rule_pos, 1);
  EXPECT_EQ(send(tcp_from(1023, 80)).rule_pos, -1);
  EXPECT_EQ(send(udp_from(2000, 80)).rule_pos, 1) << "no protocol: tcp or udp";
  EXPECT_EQ(send(Builder().ipv6("2001:db8::1", "3fff::1").udp(123, 9).build()).rule_pos, 0);
  // Packets without ports never match a source-port condition.
  EXPECT_EQ(send(Builder().ipv4("198.18.0.1", "192.0.2.1").icmp(8).build()).rule_pos, -1);
  EXPECT_EQ(send(Builder().ipv4("198.18.0.1", "192.0.2.1").fragment(10, false).udp(53, 9).build())
                .rule_pos,
            -1);
}

TEST_F(MatchTest, NoSourcePortRulesSkipTheLookup) {
  policy::Policy p;
  p.rules = {token_bucket("any", 10, 10)};
  apply(p);
  EXPECT_EQ(compiled_.config.sport_used, 0);
  EXPECT_TRUE(compiled_.port_classes[RL_SPORT_TABLE].empty());
  EXPECT_EQ(send(udp4("198.18.0.1", 53)).rule_pos, 0);
}

TEST_F(MatchTest, TcpFlagsUnderAMask) {
  using namespace packet;
  policy::Policy p;
  // ACK flood: ACK set, SYN, RST and FIN clear (PSH, URG, ECE, CWR either way).
  auto ack = token_bucket("ack-flood", 10, 10);
  ack.match.protocol = 6;
  ack.match.tcp_flags = {kAck | kSyn | kRst | kFin, kAck};
  // RST flood: RST set, anything else.
  auto rst = token_bucket("rst-flood", 10, 10);
  rst.match.protocol = 6;
  rst.match.tcp_flags = {kRst, kRst};
  auto web = token_bucket("web", 10, 10);
  web.match.ports = {{80, 80}};
  p.rules = {ack, rst, web};
  apply(p);
  EXPECT_EQ(compiled_.config.dims_used & RL_DIM_TCP_FLAGS, RL_DIM_TCP_FLAGS);
  auto rule = [&](uint8_t flags, uint16_t dport = 443) {
    return send(Builder().ipv4("198.18.0.1", "192.0.2.1").tcp(40000, dport, flags).build())
        .rule_pos;
  };
  EXPECT_EQ(rule(kAck), 0);
  EXPECT_EQ(rule(kAck | kPsh), 0);
  EXPECT_EQ(rule(kAck | 0x80 /* CWR */), 0);
  EXPECT_EQ(rule(kAck | kFin), -1);
  EXPECT_EQ(rule(kSyn | kAck), -1);
  EXPECT_EQ(rule(kRst), 1);
  EXPECT_EQ(rule(kRst | kAck), 1);
  EXPECT_EQ(rule(kSyn), -1);
  EXPECT_EQ(rule(kSyn, 80), 2) << "rules without flags take any flags";
  EXPECT_EQ(rule(kAck, 80), 0) << "the first matching rule decides";
  EXPECT_EQ(send(Builder().ipv6("2001:db8::1", "3fff::1").tcp(1, 2, kRst).build()).rule_pos, 1);
  // Packets without flags never match a flags condition, but still the rules without one.
  EXPECT_EQ(send(udp4("198.18.0.1", 80)).rule_pos, 2);
  EXPECT_EQ(
      send(Builder().ipv4("198.18.0.1", "192.0.2.1").fragment(10, false).tcp(1, 2, kRst).build())
          .rule_pos,
      -1);
  auto cut = Builder().ipv4("198.18.0.1", "192.0.2.1").tcp(1, 80, kRst).build();
  cut.resize(cut.size() - 8);  // the TCP header cut short: no flags, no ports
  EXPECT_EQ(send(cut).rule_pos, -1);
}

TEST_F(MatchTest, TtlRanges) {
  policy::Policy p;
  // Packets about to expire here: traceroute probes and TTL-expiry floods.
  auto expiring = token_bucket("ttl-expiring", 10, 10);
  expiring.match.ttl = {{0, 2}};
  auto windows = token_bucket("udp-ttl-128", 10, 10);
  windows.match.protocol = 17;
  windows.match.ttl = {{128, 128}, {250, 255}};
  p.rules = {expiring, windows, token_bucket("rest", 10, 10)};
  apply(p);
  EXPECT_EQ(compiled_.config.dims_used & RL_DIM_TTL, RL_DIM_TTL);
  auto udp_ttl = [](uint8_t ttl) {
    return Builder().ipv4("198.18.0.1", "192.0.2.1").ttl(ttl).udp(40000, 33434).build();
  };
  EXPECT_EQ(send(udp_ttl(0)).rule_pos, 0);
  EXPECT_EQ(send(udp_ttl(1)).rule_pos, 0);
  EXPECT_EQ(send(udp_ttl(2)).rule_pos, 0);
  EXPECT_EQ(send(udp_ttl(3)).rule_pos, 2);
  EXPECT_EQ(send(udp_ttl(128)).rule_pos, 1);
  EXPECT_EQ(send(udp_ttl(127)).rule_pos, 2);
  EXPECT_EQ(send(udp_ttl(255)).rule_pos, 1);
  EXPECT_EQ(send(Builder().ipv4("198.18.0.1", "192.0.2.1").ttl(128).tcp(1, 2, packet::kAck).build())
                .rule_pos,
            2)
      << "protocol udp only";
  // The IPv6 hop limit is the same field.
  EXPECT_EQ(send(Builder().ipv6("2001:db8::1", "3fff::1").ttl(1).udp(1, 2).build()).rule_pos, 0);
  EXPECT_EQ(send(Builder().ipv6("2001:db8::1", "3fff::1").ttl(64).udp(1, 2).build()).rule_pos, 2);
  // The TTL is in the IP header: fragments and packets whose transport is cut short have it.
  EXPECT_EQ(
      send(Builder().ipv4("198.18.0.1", "192.0.2.1").ttl(1).fragment(10, false).udp(1, 2).build())
          .rule_pos,
      0);
  auto cut = Builder().ipv4("198.18.0.1", "192.0.2.1").ttl(2).udp(1, 2).build();
  cut.resize(14 + 20 + 4);
  EXPECT_EQ(send(cut).rule_pos, 0);
}

TEST_F(MatchTest, IcmpTypesAndCodes) {
  policy::Policy p;
  // Fragmentation needed (3/4) is path MTU discovery: its own, wider limit.
  auto pmtu = token_bucket("pmtu", 10, 10);
  pmtu.match.protocol = 1;
  pmtu.match.icmp_types = {3};
  pmtu.match.icmp_codes = {{4, 4}};
  auto unreach = token_bucket("unreachable", 10, 10);
  unreach.match.protocol = 1;
  unreach.match.icmp_types = {3, 11};
  auto v6 = token_bucket("v6-unreachable-admin", 10, 10);
  v6.match.protocol = 58;
  v6.match.icmp_types = {1};
  v6.match.icmp_codes = {{1, 1}, {5, 6}};
  auto echo = token_bucket("echo-code-0", 10, 10);
  echo.match.protocol = 1;
  echo.match.icmp_types = {8};
  echo.match.icmp_codes = {{0, 0}};
  p.rules = {pmtu, unreach, v6, echo};
  apply(p);
  auto icmp4 = [](uint8_t type, uint8_t code) {
    return Builder().ipv4("198.18.0.1", "192.0.2.1").icmp(type, code).build();
  };
  auto icmp6 = [](uint8_t type, uint8_t code) {
    return Builder().ipv6("2001:db8::1", "3fff::1").icmp(type, code).build();
  };
  EXPECT_EQ(send(icmp4(3, 4)).rule_pos, 0);
  EXPECT_EQ(send(icmp4(3, 3)).rule_pos, 1);
  EXPECT_EQ(send(icmp4(3, 255)).rule_pos, 1);
  EXPECT_EQ(send(icmp4(11, 4)).rule_pos, 1);
  EXPECT_EQ(send(icmp4(4, 3)).rule_pos, -1) << "type 4 is not 3 with code 4";
  EXPECT_EQ(send(icmp4(8, 0)).rule_pos, 3);
  EXPECT_EQ(send(icmp4(8, 1)).rule_pos, -1) << "an echo request with an odd code";
  EXPECT_EQ(send(icmp6(1, 1)).rule_pos, 2);
  EXPECT_EQ(send(icmp6(1, 5)).rule_pos, 2);
  EXPECT_EQ(send(icmp6(1, 6)).rule_pos, 2);
  EXPECT_EQ(send(icmp6(1, 4)).rule_pos, -1);
  EXPECT_EQ(send(icmp6(3, 4)).rule_pos, -1) << "ICMPv4 rules do not take ICMPv6";
  // A port rule never matches ICMP, whatever the type and code make of the index.
  auto port = token_bucket("port-772", 10, 10);
  port.match.ports = {{3 * 256 + 4, 3 * 256 + 4}};
  p.rules = {port};
  apply(p);
  EXPECT_EQ(send(icmp4(3, 4)).rule_pos, -1);
}

TEST_F(MatchTest, LengthRanges) {
  using namespace packet;
  policy::Policy p;
  // Bare ACKs: 40 bytes of IPv4 and TCP headers, up to 60 with options.
  auto bare_ack = token_bucket("bare-ack", 10, 10);
  bare_ack.match.protocol = 6;
  bare_ack.match.tcp_flags = {kAck | kSyn | kRst | kFin, kAck};
  bare_ack.match.length = {{0, 60}};
  auto big_udp = token_bucket("big-udp", 10, 10);
  big_udp.match.protocol = 17;
  big_udp.match.length = {{1400, 1500}, {9000, 65535}};
  p.rules = {bare_ack, big_udp, token_bucket("rest", 10, 10)};
  apply(p);
  EXPECT_EQ(compiled_.config.dims_used & RL_DIM_LENGTH, RL_DIM_LENGTH);
  auto ack = [](size_t payload) {
    return Builder().ipv4("198.18.0.1", "192.0.2.1").tcp(40000, 443, kAck).payload(payload).build();
  };
  EXPECT_EQ(send(ack(0)).rule_pos, 0);   // IP length 40
  EXPECT_EQ(send(ack(20)).rule_pos, 0);  // 60
  EXPECT_EQ(send(ack(21)).rule_pos, 2);  // 61
  auto udp = [](size_t payload) {
    return Builder().ipv4("198.18.0.1", "192.0.2.1").udp(40000, 9).payload(payload).build();
  };
  EXPECT_EQ(send(udp(1400 - 28)).rule_pos, 1);
  EXPECT_EQ(send(udp(1399 - 28)).rule_pos, 2);
  EXPECT_EQ(send(udp(1500 - 28)).rule_pos, 1);
  EXPECT_EQ(send(udp(1501 - 28)).rule_pos, 2);
  // IPv6: the payload length and the 40-byte header; extension headers count as payload.
  auto udp6 = [](size_t payload, bool ext) {
    Builder b;
    b.ipv6("2001:db8::1", "3fff::1");
    if (ext) b.ipv6_ext(60, 0);  // 8 bytes of destination options
    return b.udp(1, 9).payload(payload).build();
  };
  EXPECT_EQ(send(udp6(1400 - 48, false)).rule_pos, 1);
  EXPECT_EQ(send(udp6(1399 - 48, false)).rule_pos, 2);
  EXPECT_EQ(send(udp6(1400 - 56, true)).rule_pos, 1);
  // The length the header declares, not the frame's: a frame padded to 60 bytes on the wire, and
  // one whose header claims more than it carries.
  auto padded = ack(0);
  padded.resize(padded.size() + 6);
  EXPECT_EQ(send(padded).rule_pos, 0);
  auto claims = udp(100);
  claims[14 + 2] = 1500 >> 8;
  claims[14 + 3] = 1500 & 0xff;
  EXPECT_EQ(send(claims).rule_pos, 1);
  // Fragments have a length too.
  EXPECT_EQ(send(Builder()
                     .ipv4("198.18.0.1", "192.0.2.1")
                     .fragment(10, false)
                     .udp(1, 9)
                     .payload(1400)
                     .build())
                .rule_pos,
            1);
}

TEST_F(MatchTest, NoFieldRulesSkipTheLookups) {
  policy::Policy p;
  p.rules = {token_bucket("any", 10, 10)};
  apply(p);
  EXPECT_EQ(compiled_.config.dims_used, 0);
  for (const auto& t : compiled_.byte_classes) EXPECT_TRUE(t.empty());
  EXPECT_EQ(send(tcp4("198.18.0.1", 80, packet::kRst)).rule_pos, 0);
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

TEST_F(MatchTest, RuntimeAllowAndDenyWithExpiry) {
  policy::Policy p;
  p.rules = {token_bucket("all", 1, 1)};
  apply(p);
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.1.0/24"), RL_SRC_F_ALLOW, kT0 + 10 * kSec).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8::/32"), RL_SRC_F_DENY, 0).ok());
  EXPECT_EQ(send(udp4("198.18.1.5")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp6("2001:db8::5")).reason, RL_REASON_RUNTIME_DENY);
  hooks().set_clock(kT0 + 11 * kSec);
  EXPECT_EQ(send(udp4("198.18.1.5")).reason, RL_REASON_ADMITTED) << "expired entries stop applying";
  ASSERT_TRUE(dp_->runtime_acl_remove(P("2001:db8::/32")).ok());
  EXPECT_EQ(send(udp6("2001:db8::5")).reason, RL_REASON_ADMITTED);
}

// A host's entry that has expired stops applying, and its prefix's entry applies again at once,
// before rld removes the expired one: the host's hash answers first, but an expired answer does
// not end the search.
TEST_F(MatchTest, AnExpiredHostEntryLeavesTheSourceToItsPrefix) {
  admit_all();
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.40.0/24"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.40.7/32"), RL_SRC_F_ALLOW, kT0 + 10 * kSec).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:40::/64"), RL_SRC_F_ALLOW, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:40::7/128"), RL_SRC_F_DENY, kT0 + 10 * kSec).ok());
  EXPECT_EQ(send(udp4("198.18.40.7")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp6("2001:db8:40::7")).reason, RL_REASON_RUNTIME_DENY);
  hooks().set_clock(kT0 + 11 * kSec);
  EXPECT_EQ(send(udp4("198.18.40.7")).reason, RL_REASON_RUNTIME_DENY) << "the /24's entry";
  EXPECT_EQ(send(udp6("2001:db8:40::7")).reason, RL_REASON_RUNTIME_ALLOW) << "the /64's entry";
  EXPECT_EQ(runtime_entries(), 4u) << "the expired ones stay until rld removes them";
}

// Inside a trie, an expired prefix leaves the source to the next shorter entry that covers it,
// past as many as RL_RUNTIME_EXPIRED_SKIPS expired ones, without waiting for rld to remove them.
TEST_F(MatchTest, AnExpiredPrefixLeavesTheSourceToAShorterOne) {
  admit_all();
  const uint64_t soon = kT0 + 10 * kSec;
  for (const auto& [cidr, flags, expires] :
       std::vector<std::tuple<const char*, uint32_t, uint64_t>>{
           {"198.18.0.0/16", RL_SRC_F_DENY, 0},
           {"198.18.41.0/24", RL_SRC_F_ALLOW, soon},
           {"198.18.41.0/26", RL_SRC_F_DENY, soon},
           {"198.18.41.0/28", RL_SRC_F_ALLOW, soon},
           {"2001:db8::/32", RL_SRC_F_ALLOW, 0},
           {"2001:db8:41::/48", RL_SRC_F_DENY, soon},
       })
    ASSERT_TRUE(dp_->runtime_acl_set(P(cidr), flags, expires).ok()) << cidr;
  EXPECT_EQ(send(udp4("198.18.41.5")).reason, RL_REASON_RUNTIME_ALLOW) << "the /28's entry";
  EXPECT_EQ(send(udp4("198.18.41.200")).reason, RL_REASON_RUNTIME_ALLOW) << "the /24's entry";
  EXPECT_EQ(send(udp6("2001:db8:41::5")).reason, RL_REASON_RUNTIME_DENY) << "the /48's entry";
  hooks().set_clock(soon + kSec);
  EXPECT_EQ(send(udp4("198.18.41.5")).reason, RL_REASON_RUNTIME_DENY) << "past three, the /16";
  EXPECT_EQ(send(udp4("198.18.41.200")).reason, RL_REASON_RUNTIME_DENY) << "past one, the /16";
  EXPECT_EQ(send(udp6("2001:db8:41::5")).reason, RL_REASON_RUNTIME_ALLOW) << "the /32's entry";
  EXPECT_EQ(runtime_entries(), 6u) << "the expired ones stay until rld removes them";
}

// Packets skip a runtime trie while its family's count is 0, and each change moves the count by
// one: a prefix set again (a new expiry) is not a second entry, and one removed twice is not two
// fewer, so the entries left stay in force.
TEST_F(MatchTest, RuntimeEntriesStayInForceThroughReplacesAndRepeatedRemoves) {
  admit_all();
  for (const char* cidr : {"198.18.1.0/24", "2001:db8:1::/48"}) {
    ASSERT_TRUE(dp_->runtime_acl_set(P(cidr), RL_SRC_F_DENY, 0).ok());
    ASSERT_TRUE(dp_->runtime_acl_set(P(cidr), RL_SRC_F_ALLOW, kT0 + 60 * kSec).ok());
  }
  for (const char* cidr : {"198.18.2.0/24", "2001:db8:2::/48"})
    ASSERT_TRUE(dp_->runtime_acl_set(P(cidr), RL_SRC_F_DENY, 0).ok());
  EXPECT_EQ(send(udp4("198.18.1.5")).reason, RL_REASON_RUNTIME_ALLOW) << "the later setting";
  EXPECT_EQ(send(udp6("2001:db8:1::5")).reason, RL_REASON_RUNTIME_ALLOW);
  for (const char* cidr : {"198.18.1.0/24", "2001:db8:1::/48"}) {
    ASSERT_TRUE(dp_->runtime_acl_remove(P(cidr)).ok());
    ASSERT_TRUE(dp_->runtime_acl_remove(P(cidr)).ok()) << "gone already: not an error";
  }
  EXPECT_EQ(send(udp4("198.18.2.5")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_EQ(send(udp6("2001:db8:2::5")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_EQ(send(udp4("198.18.1.5")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp6("2001:db8:1::5")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(runtime_entries(), 2u);
}

// Packets look in a runtime trie only when the runtime filter says an entry may cover their
// source (rl_runtime_filter_hit). An entry shorter than any before makes rld build the filter
// anew in its other half and switch; removing entries rebuilds it too. Entries stay in force
// through both, and sources no entry covers are never caught by a stale bit's trie lookup.
TEST_F(MatchTest, RuntimeEntriesHoldAsTheFilterIsRebuilt) {
  admit_all();
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.9.9/32"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:9::9/128"), RL_SRC_F_DENY, 0).ok());
  EXPECT_EQ(send(udp4("198.18.9.9")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_EQ(send(udp4("198.18.9.10")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp6("2001:db8:9::9")).reason, RL_REASON_RUNTIME_DENY);
  // Shorter prefixes: a rebuild per family, into the other half.
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.19.0.0/16"), RL_SRC_F_ALLOW, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:5::/48"), RL_SRC_F_ALLOW, 0).ok());
  EXPECT_EQ(send(udp4("198.19.200.1")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp6("2001:db8:5:ffff::1")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp4("198.18.9.9")).reason, RL_REASON_RUNTIME_DENY) << "kept across the switch";
  EXPECT_EQ(send(udp6("2001:db8:9::9")).reason, RL_REASON_RUNTIME_DENY);
  // Removals: the short ones go, the filter is rebuilt for the /32 and /128 again.
  ASSERT_TRUE(dp_->runtime_acl_remove(P("198.19.0.0/16")).ok());
  ASSERT_TRUE(dp_->runtime_acl_remove(P("2001:db8:5::/48")).ok());
  EXPECT_EQ(send(udp4("198.19.200.1")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp6("2001:db8:5:ffff::1")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp4("198.18.9.9")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_EQ(send(udp6("2001:db8:9::9")).reason, RL_REASON_RUNTIME_DENY);
  // Many entries: every one applies.
  for (int i = 0; i < 300; i++)
    ASSERT_TRUE(
        dp_->runtime_acl_set(P("198.18.20." + std::to_string(i % 256) + "/32"), RL_SRC_F_DENY, 0)
            .ok());
  for (int i = 0; i < 256; i += 17)
    EXPECT_EQ(send(udp4("198.18.20." + std::to_string(i))).reason, RL_REASON_RUNTIME_DENY) << i;
}

// One of the program's maps by name, from the maps the program uses: the runtime tests look at
// where rld put an entry, and put one where an rld before the hosts' hash did.
UniqueFd program_map(int prog_fd, const char* name) {
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  std::array<uint32_t, 64> ids{};
  info.nr_map_ids = ids.size();
  info.map_ids = reinterpret_cast<uintptr_t>(ids.data());
  if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0) return UniqueFd();
  for (uint32_t i = 0; i < info.nr_map_ids && i < ids.size(); i++) {
    UniqueFd fd(bpf_map_get_fd_by_id(ids[i]));
    bpf_map_info mi{};
    uint32_t mlen = sizeof(mi);
    if (fd && bpf_obj_get_info_by_fd(fd.get(), &mi, &mlen) == 0 && std::strcmp(mi.name, name) == 0)
      return fd;
  }
  return UniqueFd();
}

// The prefix lengths an IPv4 runtime map holds.
std::vector<uint32_t> prefix_lengths(int map_fd) {
  std::vector<uint32_t> out;
  rl_runtime_lpm4_key k{}, next{};
  const void* prev = nullptr;
  while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
    out.push_back(next.prefixlen);
    k = next;
    prev = &k;
  }
  return out;
}

// A host's entry (/32, /128) is the longest match: it goes to the host table, which packets ask
// first, and overrides its prefix's entry either way. A host entry an rld before the hash left in
// the trie still applies, and moves to the table when set again.
TEST_F(MatchTest, RuntimeHostEntriesAreTheLongestMatch) {
  admit_all();
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.30.0/24"), RL_SRC_F_ALLOW, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.30.7/32"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:30::/64"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:30::7/128"), RL_SRC_F_ALLOW, 0).ok());
  EXPECT_EQ(send(udp4("198.18.30.7")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_EQ(send(udp4("198.18.30.8")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp6("2001:db8:30::7")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp6("2001:db8:30::8")).reason, RL_REASON_RUNTIME_DENY);

  UniqueFd trie = program_map(dp_->prog_fd(), "rl_runtime_v4");
  UniqueFd hosts = program_map(dp_->prog_fd(), "rl_host_acl_v4");
  ASSERT_TRUE(trie && hosts);
  EXPECT_EQ(prefix_lengths(trie.get()), std::vector<uint32_t>{24});
  EXPECT_TRUE(prefix_lengths(hosts.get()).empty()) << "the host is in the table, not the hash";

  // An entry for 198.18.30.9/32 in the trie, as an rld before the hash put it there, and
  // counted, as rld counts the entries it finds when it loads.
  rl_runtime_lpm4_key legacy{32, {198, 18, 30, 9}};
  rl_runtime_entry deny{RL_SRC_F_DENY, 0, 0};
  ASSERT_EQ(bpf_map_update_elem(trie.get(), &legacy, &deny, BPF_NOEXIST), 0);
  UniqueFd control = program_map(dp_->prog_fd(), "rl_control");
  ASSERT_TRUE(control);
  uint32_t zero = 0;
  rl_control ctl{};
  ASSERT_EQ(bpf_map_lookup_elem(control.get(), &zero, &ctl), 0);
  ctl.runtime_acl_v4++;
  ASSERT_EQ(bpf_map_update_elem(control.get(), &zero, &ctl, BPF_ANY), 0);
  EXPECT_EQ(send(udp4("198.18.30.9")).reason, RL_REASON_RUNTIME_DENY) << "the trie's host entry";
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.30.9/32"), RL_SRC_F_DENY, 0).ok());
  EXPECT_EQ(prefix_lengths(trie.get()), std::vector<uint32_t>{24}) << "it moved to the table";
  EXPECT_EQ(send(udp4("198.18.30.9")).reason, RL_REASON_RUNTIME_DENY);
  auto listed = dp_->runtime_acl_list();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(std::count_if(listed->begin(), listed->end(),
                          [](const auto& e) { return e.prefix == P("198.18.30.9/32"); }),
            1);
  EXPECT_EQ(listed->size(), 5u);

  // Removed, the hosts fall back to their prefixes' entries.
  ASSERT_TRUE(dp_->runtime_acl_remove(P("198.18.30.9/32")).ok());
  ASSERT_TRUE(dp_->runtime_acl_remove(P("198.18.30.7/32")).ok());
  ASSERT_TRUE(dp_->runtime_acl_remove(P("2001:db8:30::7/128")).ok());
  EXPECT_EQ(send(udp4("198.18.30.7")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp4("198.18.30.9")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp6("2001:db8:30::7")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_TRUE(prefix_lengths(hosts.get()).empty());
}

// Pinned maps, as rld keeps them, so that a second load adopts the first one's entries.
class PinnedRuntimeTest : public MatchTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(prepare_pin_root(root_).ok());
    MatchTest::SetUp();
  }
  void options(LoadOptions& o) override {
    o.pin_root = root_;
    o.cluster_keys = RL_CLUSTER_KEYS;  // as rld sizes it, which an adopting load checks
  }
  // Loads the program again, adopting the pinned maps, as a restarted rld does.
  void reload() {
    LoadOptions o;
    o.key_capacity = 1 << 16;
    o.trace_decisions = true;
    options(o);
    auto second = BpfDatapath::load(o);
    ASSERT_TRUE(second.ok()) << second.error().str();
    dp_ = std::move(*second);
    ASSERT_TRUE(dp_->adopted());
  }
  void TearDown() override {
    dp_.reset();
    EXPECT_TRUE(remove_pins(root_).ok());
  }
  const std::string root_ = "/sys/fs/bpf/rl-bpf-test-" + std::to_string(getpid());
};

// An rld before rl_runtime_entry.prefixlen left 0 there, and an rld before the host table put
// hosts in the hash. Packets stop at such an entry once it has expired, as they did, until a load
// stamps each entry with its length; then they look past it, and rld finds it by its prefix. A
// load also finds the hash's hosts, and packets ask the hash for them until they move to the
// table.
TEST_F(PinnedRuntimeTest, EntriesOfAnEarlierRldAreStampedWithTheirLengthAtLoad) {
  admit_all();
  const uint64_t soon = kT0 + 10 * kSec;
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.0.0/16"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.42.0/24"), RL_SRC_F_ALLOW, soon).ok());
  UniqueFd trie = program_map(dp_->prog_fd(), "rl_runtime_v4");
  UniqueFd hosts = program_map(dp_->prog_fd(), "rl_host_acl_v4");
  UniqueFd control = program_map(dp_->prog_fd(), "rl_control");
  ASSERT_TRUE(trie && hosts && control);
  rl_runtime_lpm4_key k24{24, {198, 18, 42, 0}}, k16{16, {198, 18, 0, 0}};
  rl_runtime_lpm4_key k7{32, {198, 18, 42, 7}}, k9{32, {198, 18, 42, 9}};
  rl_runtime_entry legacy{RL_SRC_F_ALLOW, 0, soon};
  ASSERT_EQ(bpf_map_update_elem(trie.get(), &k24, &legacy, BPF_EXIST), 0);
  ASSERT_EQ(bpf_map_update_elem(hosts.get(), &k7, &legacy, BPF_NOEXIST), 0);
  legacy = {RL_SRC_F_ALLOW, 0, 0};
  ASSERT_EQ(bpf_map_update_elem(hosts.get(), &k9, &legacy, BPF_NOEXIST), 0);
  legacy = {RL_SRC_F_DENY, 0, 0};
  ASSERT_EQ(bpf_map_update_elem(trie.get(), &k16, &legacy, BPF_EXIST), 0);
  uint32_t zero = 0;
  rl_control ctl{};
  ASSERT_EQ(bpf_map_lookup_elem(control.get(), &zero, &ctl), 0);
  ctl.runtime_acl_v4 += 2;  // the hash's two, as that rld counted them
  ASSERT_EQ(bpf_map_update_elem(control.get(), &zero, &ctl, BPF_ANY), 0);
  hooks().set_clock(soon + kSec);
  EXPECT_EQ(send(udp4("198.18.42.5")).reason, RL_REASON_ADMITTED) << "stops at the /24";

  ASSERT_NO_FATAL_FAILURE(reload());
  hooks().set_clock(soon + kSec);
  EXPECT_EQ(send(udp4("198.18.42.5")).reason, RL_REASON_RUNTIME_DENY) << "past the /24";
  EXPECT_EQ(send(udp4("198.18.42.7")).reason, RL_REASON_RUNTIME_DENY) << "past the hash's /32";
  EXPECT_EQ(send(udp4("198.18.42.9")).reason, RL_REASON_RUNTIME_ALLOW) << "the hash's /32";
  rl_runtime_entry e{};
  ASSERT_EQ(bpf_map_lookup_elem(trie.get(), &k16, &e), 0);
  EXPECT_EQ(e.prefixlen, 16u);
  ASSERT_EQ(bpf_map_lookup_elem(hosts.get(), &k7, &e), 0);
  EXPECT_EQ(e.prefixlen, 32u);
  auto found = dp_->runtime_acl_find(P("198.18.42.0/24"));
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->flags, RL_SRC_F_ALLOW);
  EXPECT_EQ((*found)->expires_ns, soon);
  found = dp_->runtime_acl_find(P("198.18.42.9/32"));
  ASSERT_TRUE(found.ok() && found->has_value()) << "found in the hash";

  // Set again, the hash's hosts move to the table; removed, they are gone from both.
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.42.9/32"), RL_SRC_F_ALLOW, 0).ok());
  EXPECT_EQ(prefix_lengths(hosts.get()), std::vector<uint32_t>{32}) << "198.18.42.7's is left";
  EXPECT_EQ(send(udp4("198.18.42.9")).reason, RL_REASON_RUNTIME_ALLOW) << "the table's /32";
  ASSERT_TRUE(dp_->runtime_acl_remove(P("198.18.42.7/32")).ok());
  EXPECT_TRUE(prefix_lengths(hosts.get()).empty());
  EXPECT_EQ(runtime_entries(), 3u) << "the /16, the /24 and 198.18.42.9";
}

// The host table is pinned with the hash seed that places its hosts: a load that adopts it finds
// every host in the set packets look in, as a restarted rld does.
TEST_F(PinnedRuntimeTest, TableHostsHoldAcrossALoad) {
  admit_all();
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.50.1/32"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:50::1/128"), RL_SRC_F_ALLOW, 0).ok());
  ASSERT_NO_FATAL_FAILURE(reload());
  hooks().set_clock(kT0);
  EXPECT_EQ(send(udp4("198.18.50.1")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_EQ(send(udp6("2001:db8:50::1")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp4("198.18.50.2")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(runtime_entries(), 2u);
  ASSERT_TRUE(dp_->runtime_acl_remove(P("198.18.50.1/32")).ok());
  EXPECT_EQ(send(udp4("198.18.50.1")).reason, RL_REASON_ADMITTED);
  auto found = dp_->runtime_acl_find(P("2001:db8:50::1/128"));
  ASSERT_TRUE(found.ok() && found->has_value());
}

// A host whose set of the table has no way free goes to the hosts' hash, which packets then ask;
// once a way is free, setting it again moves it to the table, and packets stop asking the hash
// when it is empty.
TEST_F(MatchTest, AHostWhoseSetIsFullGoesToTheHash) {
  admit_all();
  UniqueFd control = program_map(dp_->prog_fd(), "rl_control");
  UniqueFd hash = program_map(dp_->prog_fd(), "rl_host_acl_v4");
  ASSERT_TRUE(control && hash);
  uint32_t zero = 0;
  rl_control ctl{};
  ASSERT_EQ(bpf_map_lookup_elem(control.get(), &zero, &ctl), 0);
  // RL_HOST_WAYS_V4 + 1 addresses of 198.18.0.0/15 in one set: 2^17 addresses over the sets
  // put about 4 in each, and over a third of the sets get 5 or more.
  std::map<uint32_t, std::vector<std::string>> by_set;
  std::vector<std::string> same_set;
  for (uint32_t i = 0; i < (1u << 17) && same_set.empty(); i++) {
    uint32_t host = (198u << 24 | 18u << 16) + i;
    uint32_t a[4] = {htonl(host), 0, 0, 0};
    auto& set = by_set[rl_host_set_index(a, 4, ctl.hash_seed)];
    set.push_back(std::to_string(host >> 24) + "." + std::to_string(host >> 16 & 255) + "." +
                  std::to_string(host >> 8 & 255) + "." + std::to_string(host & 255));
    if (set.size() == RL_HOST_WAYS_V4 + 1) same_set = set;
  }
  ASSERT_EQ(same_set.size(), RL_HOST_WAYS_V4 + 1u);
  for (const auto& h : same_set) ASSERT_TRUE(dp_->runtime_acl_set(P(h), RL_SRC_F_DENY, 0).ok());
  EXPECT_EQ(prefix_lengths(hash.get()), std::vector<uint32_t>{32}) << "one in the hash";
  for (const auto& h : same_set) EXPECT_EQ(send(udp4(h)).reason, RL_REASON_RUNTIME_DENY) << h;
  EXPECT_EQ(send(udp4("198.18.255.255")).reason, RL_REASON_ADMITTED);

  ASSERT_TRUE(dp_->runtime_acl_remove(P(same_set[0])).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P(same_set.back()), RL_SRC_F_ALLOW, 0).ok());
  EXPECT_TRUE(prefix_lengths(hash.get()).empty()) << "it moved to the freed way";
  EXPECT_EQ(send(udp4(same_set[0])).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp4(same_set.back())).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(runtime_entries(), RL_HOST_WAYS_V4 + 0u);
  ASSERT_EQ(bpf_map_lookup_elem(control.get(), &zero, &ctl), 0);
  EXPECT_EQ(ctl.runtime_acl_v4, RL_HOST_WAYS_V4 + 0u) << "counted once each, wherever they were";
}

// rld finds an entry by its exact prefix, not the longest match that covers it.
TEST_F(MatchTest, RuntimeEntriesAreFoundByTheirExactPrefix) {
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.0.0/16"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.43.7/32"), RL_SRC_F_ALLOW, kT0 + kSec).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:43::/48"), RL_SRC_F_ALLOW, 0).ok());
  for (const char* cidr : {"198.18.0.0/16", "198.18.43.7/32", "2001:db8:43::/48"}) {
    auto found = dp_->runtime_acl_find(P(cidr));
    ASSERT_TRUE(found.ok()) << cidr;
    ASSERT_TRUE(found->has_value()) << cidr;
    EXPECT_EQ((*found)->prefix, P(cidr));
  }
  EXPECT_EQ((*dp_->runtime_acl_find(P("198.18.43.7/32")))->flags, RL_SRC_F_ALLOW);
  for (const char* cidr : {"198.18.43.0/24", "198.18.43.8/32", "198.0.0.0/8", "2001:db8:43::/64",
                           "2001:db8:43::1/128"}) {
    auto found = dp_->runtime_acl_find(P(cidr));
    ASSERT_TRUE(found.ok()) << cidr;
    EXPECT_FALSE(found->has_value()) << cidr << " is only covered by an entry";
  }
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

// A rule on addresses alone limits every crafted packet; each kind gets its own source, so its
// own bucket of 2.
TEST_F(CraftedTest, AddressRulesLimitEveryCraftedPacket) {
  apply(policy(policy::Verdict::kPass));
  size_t n = crafted("198.18.10.1", "2001:db8:10::1").size();
  for (size_t i = 0; i < n; i++) {
    std::string host = std::to_string(i + 1);
    const auto c = crafted("198.18.10." + host, "2001:db8:10::" + host)[i];
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
