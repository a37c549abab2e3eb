// SPDX-License-Identifier: GPL-2.0-only
// Rule conditions on header fields: protocol and ports, source ports, TCP flags under a mask,
// TTL, ICMP types and codes, lengths; and the lookups skipped when no rule names a field.
#include <string>
#include <vector>

#include "match_fixture.h"

namespace rl::testing {
namespace {

using namespace packet;

// One policy per field, whose rules the cases below pick among.
policy::Policy conditions() {
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
  return p;
}

policy::Policy source_ports() {
  policy::Policy p;
  auto reflection = token_bucket("reflection", 10, 10);
  reflection.match.protocol = 17;
  reflection.match.source_ports = {{19, 19}, {53, 53}, {123, 123}, {1900, 1900}, {11211, 11211}};
  auto high = token_bucket("tcp-from-high-ports", 10, 10);
  high.match.source_ports = {{1024, 65535}};
  high.match.ports = {{80, 80}};
  p.rules = {reflection, high};
  return p;
}

policy::Policy tcp_flags() {
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
  return p;
}

policy::Policy ttl_ranges() {
  policy::Policy p;
  // Packets about to expire here: traceroute probes and TTL-expiry floods.
  auto expiring = token_bucket("ttl-expiring", 10, 10);
  expiring.match.ttl = {{0, 2}};
  auto windows = token_bucket("udp-ttl-128", 10, 10);
  windows.match.protocol = 17;
  windows.match.ttl = {{128, 128}, {250, 255}};
  p.rules = {expiring, windows, token_bucket("rest", 10, 10)};
  return p;
}

policy::Policy fragments() {
  policy::Policy p;
  // The first fragment of a DNS reply has its source port; the later ones have none.
  auto first = token_bucket("dns-first-fragment", 10, 10);
  first.match.protocol = 17;
  first.match.source_ports = {{53, 53}};
  first.match.fragments = 1u << RL_FRAG_FIRST;
  auto later = token_bucket("udp-later-fragments", 10, 10);
  later.match.protocol = 17;
  later.match.fragments = 1u << RL_FRAG_LATER;
  auto any = token_bucket("any-fragment", 10, 10);
  any.match.fragments = (1u << RL_FRAG_FIRST) | (1u << RL_FRAG_LATER);
  auto syn = token_bucket("whole-syn", 10, 10);
  syn.match.protocol = 6;
  syn.match.tcp_syn = true;
  syn.match.fragments = 1u << RL_FRAG_NONE;
  p.rules = {first, later, any, syn, token_bucket("rest", 10, 10)};
  return p;
}

policy::Policy icmp_types_and_codes() {
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
  return p;
}

// A port rule whose port is what ICMP type 3 code 4 would make of the port index.
policy::Policy port_772() {
  policy::Policy p;
  auto port = token_bucket("port-772", 10, 10);
  port.match.ports = {{3 * 256 + 4, 3 * 256 + 4}};
  p.rules = {port};
  return p;
}

policy::Policy length_ranges() {
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
  return p;
}

// Frames from 198.18.0.1 to 192.0.2.1, or 2001:db8::1 to 3fff::1.
Builder frame4() { return ipv4_frame("198.18.0.1", "192.0.2.1"); }
Builder frame6() { return ipv6_frame("2001:db8::1", "3fff::1"); }
std::vector<uint8_t> tcp(uint16_t dport, uint8_t flags) {
  return frame4().tcp(40000, dport, flags).build();
}
std::vector<uint8_t> udp(uint16_t dport) { return frame4().udp(40000, dport).build(); }
std::vector<uint8_t> udp_from(uint16_t sport, uint16_t dport) {
  return frame4().udp(sport, dport).build();
}
std::vector<uint8_t> tcp_from(uint16_t sport, uint16_t dport) {
  return frame4().tcp(sport, dport, kAck).build();
}
std::vector<uint8_t> udp_ttl(uint8_t ttl) { return frame4().ttl(ttl).udp(40000, 33434).build(); }
std::vector<uint8_t> icmp4(uint8_t type, uint8_t code) { return frame4().icmp(type, code).build(); }
std::vector<uint8_t> icmp6(uint8_t type, uint8_t code) { return frame6().icmp(type, code).build(); }
std::vector<uint8_t> ack(size_t payload) {
  return frame4().tcp(40000, 443, kAck).payload(payload).build();
}
std::vector<uint8_t> big_udp(size_t payload) {
  return frame4().udp(40000, 9).payload(payload).build();
}
// IPv6 counts the payload length and the 40-byte header; extension headers count as payload.
std::vector<uint8_t> big_udp6(size_t payload, bool ext) {
  Builder b = frame6();
  if (ext) b.ipv6_ext(60, 0);  // 8 bytes of destination options
  return b.udp(1, 9).payload(payload).build();
}

// A frame, and the rule of `policy` it must match: its position, -1 for none. As in Katran's
// packet test fixtures the cases are data; one parameterised test loads a program for each.
struct MatchCase {
  const char* name;  // what the frame is, and why it gets that rule: the test's name
  policy::Policy (*policy)();
  std::vector<uint8_t> (*frame)();
  int rule_pos;
};

const MatchCase kConditions[] = {
    {"TcpSynTo443", conditions, [] { return tcp(443, kSyn); }, 0},
    {"TcpSynTo8050InARange", conditions, [] { return tcp(8050, kSyn); }, 0},
    {"TcpSynTo8101PastTheRange", conditions, [] { return tcp(8101, kSyn); }, -1},
    {"TcpSynAckIsNotASyn", conditions, [] { return tcp(443, kSyn | kAck); }, -1},
    {"TcpAckIsNotASyn", conditions, [] { return tcp(443, kAck); }, -1},
    {"UdpTo53", conditions, [] { return udp(53); }, 1},
    {"TcpTo53IsNotUdp", conditions, [] { return tcp(53, kAck); }, -1},
    {"UdpTo9000", conditions, [] { return udp(9000); }, 2},
    {"TcpTo9000", conditions, [] { return tcp(9000, kAck); }, 2},
    {"IcmpTimestamp", conditions, [] { return frame4().icmp(13).build(); }, 3},
    {"IcmpEchoReply", conditions, [] { return frame4().icmp(0).build(); }, -1},
    {"Gre", conditions, [] { return frame4().l4_protocol(47).payload(20).build(); }, 4},
};

const MatchCase kSourcePorts[] = {
    {"UdpFromChargen", source_ports, [] { return udp_from(19, 40000); }, 0},
    {"UdpFromDns", source_ports, [] { return udp_from(53, 40000); }, 0},
    {"UdpFromNtp", source_ports, [] { return udp_from(123, 40000); }, 0},
    {"UdpFromSsdp", source_ports, [] { return udp_from(1900, 40000); }, 0},
    {"UdpFromMemcached", source_ports, [] { return udp_from(11211, 40000); }, 0},
    {"UdpFrom54", source_ports, [] { return udp_from(54, 40000); }, -1},
    {"TcpFromDnsProtocolUdpOnly", source_ports, [] { return tcp_from(53, 40000); }, -1},
    {"TcpFrom1024To80", source_ports, [] { return tcp_from(1024, 80); }, 1},
    {"TcpFrom65535To80", source_ports, [] { return tcp_from(65535, 80); }, 1},
    {"TcpFrom1023To80", source_ports, [] { return tcp_from(1023, 80); }, -1},
    {"UdpFrom2000To80NoProtocolTcpOrUdp", source_ports, [] { return udp_from(2000, 80); }, 1},
    {"Ipv6UdpFromNtp", source_ports, [] { return frame6().udp(123, 9).build(); }, 0},
    // Packets without ports never match a source-port condition.
    {"IcmpHasNoPorts", source_ports, [] { return frame4().icmp(8).build(); }, -1},
    {"LaterFragmentHasNoPorts", source_ports,
     [] { return frame4().fragment(10, false).udp(53, 9).build(); }, -1},
};

const MatchCase kTcpFlags[] = {
    {"Ack", tcp_flags, [] { return tcp(443, kAck); }, 0},
    {"AckPsh", tcp_flags, [] { return tcp(443, kAck | kPsh); }, 0},
    {"AckCwr", tcp_flags, [] { return tcp(443, kAck | 0x80 /* CWR */); }, 0},
    {"AckFin", tcp_flags, [] { return tcp(443, kAck | kFin); }, -1},
    {"SynAck", tcp_flags, [] { return tcp(443, kSyn | kAck); }, -1},
    {"Rst", tcp_flags, [] { return tcp(443, kRst); }, 1},
    {"RstAck", tcp_flags, [] { return tcp(443, kRst | kAck); }, 1},
    {"Syn", tcp_flags, [] { return tcp(443, kSyn); }, -1},
    {"SynTo80RulesWithoutFlagsTakeAnyFlags", tcp_flags, [] { return tcp(80, kSyn); }, 2},
    {"AckTo80TheFirstMatchingRuleDecides", tcp_flags, [] { return tcp(80, kAck); }, 0},
    {"Ipv6Rst", tcp_flags, [] { return frame6().tcp(1, 2, kRst).build(); }, 1},
    // Packets without flags never match a flags condition, but still the rules without one.
    {"UdpTo80", tcp_flags, [] { return udp(80); }, 2},
    {"LaterFragmentHasNoFlags", tcp_flags,
     [] { return frame4().fragment(10, false).tcp(1, 2, kRst).build(); }, -1},
    {"TcpHeaderCutShortHasNoFlagsNoPorts", tcp_flags,
     [] {
       auto cut = frame4().tcp(1, 80, kRst).build();
       cut.resize(cut.size() - 8);
       return cut;
     },
     -1},
};

const MatchCase kTtl[] = {
    {"Ttl0", ttl_ranges, [] { return udp_ttl(0); }, 0},
    {"Ttl1", ttl_ranges, [] { return udp_ttl(1); }, 0},
    {"Ttl2", ttl_ranges, [] { return udp_ttl(2); }, 0},
    {"Ttl3", ttl_ranges, [] { return udp_ttl(3); }, 2},
    {"Ttl128", ttl_ranges, [] { return udp_ttl(128); }, 1},
    {"Ttl127", ttl_ranges, [] { return udp_ttl(127); }, 2},
    {"Ttl255", ttl_ranges, [] { return udp_ttl(255); }, 1},
    {"TcpTtl128ProtocolUdpOnly", ttl_ranges,
     [] { return frame4().ttl(128).tcp(1, 2, kAck).build(); }, 2},
    // The IPv6 hop limit is the same field.
    {"Ipv6HopLimit1", ttl_ranges, [] { return frame6().ttl(1).udp(1, 2).build(); }, 0},
    {"Ipv6HopLimit64", ttl_ranges, [] { return frame6().ttl(64).udp(1, 2).build(); }, 2},
    // The TTL is in the IP header: fragments and packets whose transport is cut short have it.
    {"LaterFragmentHasItsTtl", ttl_ranges,
     [] { return frame4().ttl(1).fragment(10, false).udp(1, 2).build(); }, 0},
    {"UdpHeaderCutShortHasItsTtl", ttl_ranges,
     [] {
       auto cut = frame4().ttl(2).udp(1, 2).build();
       cut.resize(14 + 20 + 4);
       return cut;
     },
     0},
};

const MatchCase kIcmp[] = {
    {"FragmentationNeeded", icmp_types_and_codes, [] { return icmp4(3, 4); }, 0},
    {"PortUnreachable", icmp_types_and_codes, [] { return icmp4(3, 3); }, 1},
    {"UnreachableCode255", icmp_types_and_codes, [] { return icmp4(3, 255); }, 1},
    {"TimeExceeded", icmp_types_and_codes, [] { return icmp4(11, 4); }, 1},
    {"Type4IsNot3WithCode4", icmp_types_and_codes, [] { return icmp4(4, 3); }, -1},
    {"EchoRequest", icmp_types_and_codes, [] { return icmp4(8, 0); }, 3},
    {"EchoRequestWithAnOddCode", icmp_types_and_codes, [] { return icmp4(8, 1); }, -1},
    {"Icmpv6AdminProhibited", icmp_types_and_codes, [] { return icmp6(1, 1); }, 2},
    {"Icmpv6SourcePolicyFailed", icmp_types_and_codes, [] { return icmp6(1, 5); }, 2},
    {"Icmpv6RejectRoute", icmp_types_and_codes, [] { return icmp6(1, 6); }, 2},
    {"Icmpv6PortUnreachable", icmp_types_and_codes, [] { return icmp6(1, 4); }, -1},
    {"Icmpv4RulesDoNotTakeIcmpv6", icmp_types_and_codes, [] { return icmp6(3, 4); }, -1},
    // A port rule never matches ICMP, whatever the type and code make of the index.
    {"APortRuleNeverMatchesIcmp", port_772, [] { return icmp4(3, 4); }, -1},
};

const MatchCase kLength[] = {
    {"BareAckIpLength40", length_ranges, [] { return ack(0); }, 0},
    {"AckIpLength60", length_ranges, [] { return ack(20); }, 0},
    {"AckIpLength61", length_ranges, [] { return ack(21); }, 2},
    {"UdpIpLength1400", length_ranges, [] { return big_udp(1400 - 28); }, 1},
    {"UdpIpLength1399", length_ranges, [] { return big_udp(1399 - 28); }, 2},
    {"UdpIpLength1500", length_ranges, [] { return big_udp(1500 - 28); }, 1},
    {"UdpIpLength1501", length_ranges, [] { return big_udp(1501 - 28); }, 2},
    {"Ipv6UdpLength1400", length_ranges, [] { return big_udp6(1400 - 48, false); }, 1},
    {"Ipv6UdpLength1399", length_ranges, [] { return big_udp6(1399 - 48, false); }, 2},
    {"Ipv6UdpLength1400WithAnExtensionHeader", length_ranges,
     [] { return big_udp6(1400 - 56, true); }, 1},
    // The length the header declares, not the frame's: a frame padded to 60 bytes on the wire,
    // and one whose header claims more than it carries.
    {"AckPaddedOnTheWire", length_ranges,
     [] {
       auto padded = ack(0);
       padded.resize(padded.size() + 6);
       return padded;
     },
     0},
    {"UdpHeaderClaiming1500", length_ranges,
     [] {
       auto claims = big_udp(100);
       claims[14 + 2] = 1500 >> 8;
       claims[14 + 3] = 1500 & 0xff;
       return claims;
     },
     1},
    // Fragments have a length too.
    {"LaterFragmentHasItsLength", length_ranges,
     [] { return frame4().fragment(10, false).udp(1, 9).payload(1400).build(); }, 1},
};

const MatchCase kFragmentMatches[] = {
    {"FirstFragmentFromDns", fragments,
     [] { return frame4().fragment(0, true).udp(53, 9).payload(100).build(); }, 0},
    {"FirstFragmentFromAnotherPort", fragments,
     [] { return frame4().fragment(0, true).udp(54, 9).payload(100).build(); }, 2},
    {"LaterFragmentOfUdp", fragments,
     [] { return frame4().fragment(185, false).udp(53, 9).payload(100).build(); }, 1},
    {"MiddleFragmentOfUdp", fragments,
     [] { return frame4().fragment(185, true).udp(53, 9).payload(100).build(); }, 1},
    {"LaterFragmentOfTcp", fragments,
     [] { return frame4().fragment(185, false).tcp(1, 80, kSyn).payload(100).build(); }, 2},
    {"WholeDnsReplyIsNoFragment", fragments, [] { return frame4().udp(53, 9).build(); }, 4},
    {"WholeSyn", fragments, [] { return tcp(80, kSyn); }, 3},
    {"WholeAckIsNotASyn", fragments, [] { return tcp(80, kAck); }, 4},
    {"SynInAFirstFragment", fragments,
     [] { return frame4().fragment(0, true).tcp(1, 80, kSyn).payload(100).build(); }, 2},
    {"Ipv6FirstFragmentFromDns", fragments,
     [] { return frame6().fragment(0, true).udp(53, 9).payload(100).build(); }, 0},
    {"Ipv6LaterFragmentOfUdp", fragments,
     [] { return frame6().fragment(185, false).udp(53, 9).payload(100).build(); }, 1},
    // Offset 0 and no more to come: the whole datagram, behind a fragment header.
    {"Ipv6AtomicFragmentIsNoFragment", fragments,
     [] { return frame6().fragment(0, false).udp(53, 9).build(); }, 4},
};

class MatchCaseTest : public MatchTest, public ::testing::WithParamInterface<MatchCase> {};

TEST_P(MatchCaseTest, PicksTheRule) {
  const MatchCase& c = GetParam();
  ASSERT_NO_FATAL_FAILURE(apply(c.policy()));
  EXPECT_EQ(send(c.frame()).rule_pos, c.rule_pos);
}

std::string match_case_name(const ::testing::TestParamInfo<MatchCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Conditions, MatchCaseTest, ::testing::ValuesIn(kConditions),
                         match_case_name);
INSTANTIATE_TEST_SUITE_P(SourcePorts, MatchCaseTest, ::testing::ValuesIn(kSourcePorts),
                         match_case_name);
INSTANTIATE_TEST_SUITE_P(TcpFlags, MatchCaseTest, ::testing::ValuesIn(kTcpFlags), match_case_name);
INSTANTIATE_TEST_SUITE_P(Ttl, MatchCaseTest, ::testing::ValuesIn(kTtl), match_case_name);
INSTANTIATE_TEST_SUITE_P(Icmp, MatchCaseTest, ::testing::ValuesIn(kIcmp), match_case_name);
INSTANTIATE_TEST_SUITE_P(Length, MatchCaseTest, ::testing::ValuesIn(kLength), match_case_name);
INSTANTIATE_TEST_SUITE_P(Fragment, MatchCaseTest, ::testing::ValuesIn(kFragmentMatches),
                         match_case_name);

// What each policy compiles to: the lookups its fields need.
TEST_F(MatchTest, SourcePortRulesUseTheLookup) {
  apply(source_ports());
  EXPECT_EQ(compiled_.config.sport_used, 1);
}

TEST_F(MatchTest, FieldRulesUseTheirLookups) {
  apply(tcp_flags());
  EXPECT_EQ(compiled_.config.dims_used & RL_DIM_TCP_FLAGS, RL_DIM_TCP_FLAGS);
  apply(ttl_ranges());
  EXPECT_EQ(compiled_.config.dims_used & RL_DIM_TTL, RL_DIM_TTL);
  apply(fragments());
  EXPECT_EQ(compiled_.config.dims_used & (RL_DIM_FRAGMENT | RL_DIM_NEW_CONN),
            RL_DIM_FRAGMENT | RL_DIM_NEW_CONN);
  apply(length_ranges());
  EXPECT_EQ(compiled_.config.dims_used & RL_DIM_LENGTH, RL_DIM_LENGTH);
}

TEST_F(MatchTest, NoSourcePortRulesSkipTheLookup) {
  policy::Policy p;
  p.rules = {token_bucket("any", 10, 10)};
  apply(p);
  EXPECT_EQ(compiled_.config.sport_used, 0);
  EXPECT_TRUE(compiled_.port_classes[RL_SPORT_TABLE].empty());
  EXPECT_EQ(send(udp4("198.18.0.1", 53)).rule_pos, 0);
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
