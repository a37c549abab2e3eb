// SPDX-License-Identifier: GPL-2.0-only
// Rule conditions on header fields: protocol and ports, source ports, TCP flags under a mask,
// TTL, ICMP types and codes, lengths; and the lookups skipped when no rule names a field.
#include <vector>

#include "match_fixture.h"

namespace rl::testing {
namespace {

using packet::Builder;

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

}  // namespace
}  // namespace rl::testing
