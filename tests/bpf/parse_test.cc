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
};

// One frame through the parser and what the program must make of it under ParseTest's rules: the
// cases are data, as in Katran's packet test fixtures, and one parameterised test runs each on a
// program loaded for it alone, so that the global counters show what that one frame added.
struct ParseCase {
  const char* name;  // what the frame is: the test's name
  std::vector<uint8_t> (*frame)();
  const char* rule = nullptr;  // the rule that admits it; nullptr: not admitted, for `reason`
  uint32_t reason = RL_REASON_ADMITTED;
  int verdict = -1;                                   // the XDP action, where the case names one
  uint64_t malformed = 0, fragments = 0, non_ip = 0;  // what it adds to those global counters
};

Builder v4() { return ipv4_frame("198.18.0.1", "192.0.2.1"); }
Builder v6() { return ipv6_frame("2001:db8::1", "2001:db8::2"); }

// A frame of RL_VLAN_MAX_TAGS + `extra` tags, alternating 802.1ad and 802.1Q as Linux stacks them.
Builder vlans(int extra, bool alternate) {
  Builder b;
  for (int i = 0; i < RL_VLAN_MAX_TAGS + extra; i++)
    b.vlan(i + 1, alternate && i % 2 == 0 ? 0x88a8 : 0x8100);
  return b;
}

// An IPv6 header and RL_IPV6_MAX_EXT_HDRS + `extra` destination-options headers.
Builder ext_chain(int extra) {
  Builder b = v6();
  for (int i = 0; i < RL_IPV6_MAX_EXT_HDRS + extra; i++) b.ipv6_ext(60);
  return b;
}

// A valid UDP frame with bytes `at` set to `values`: headers that say nonsense.
template <size_t N>
std::vector<uint8_t> udp4_with(size_t at, const uint8_t (&values)[N]) {
  auto f = v4().udp(1, 53).build();
  for (size_t i = 0; i < N; i++) f[at + i] = values[i];
  return f;
}

const ParseCase kTransports[] = {
    {.name = "Ipv4TcpAckToPort80",
     .frame = [] { return v4().tcp(1234, 80, packet::kAck).build(); },
     .rule = "tcp80"},
    {.name = "Ipv4TcpSyn",
     .frame = [] { return v4().tcp(1234, 80, packet::kSyn).build(); },
     .rule = "tcp-syn"},
    {.name = "Ipv4UdpToPort53",
     .frame = [] { return v4().udp(1234, 53).build(); },
     .rule = "udp53"},
    {.name = "Ipv4EchoRequest", .frame = [] { return v4().icmp(8).build(); }, .rule = "echo"},
    {.name = "Ipv4EchoReply",
     .frame = [] { return v4().icmp(0).build(); },
     .reason = RL_REASON_UNMATCHED},
    {.name = "Ipv4TcpAckToPort81",
     .frame = [] { return v4().tcp(1, 81, packet::kAck).build(); },
     .reason = RL_REASON_UNMATCHED},
    {.name = "Ipv4OptionsAreSkipped",
     .frame = [] { return v4().ipv4_options(10).udp(1, 53).build(); },
     .rule = "udp53"},
    {.name = "Ipv6TcpAckToPort80",
     .frame = [] { return v6().tcp(1, 80, packet::kAck).build(); },
     .rule = "tcp80"},
    {.name = "Ipv6UdpToPort53", .frame = [] { return v6().udp(1, 53).build(); }, .rule = "udp53"},
    {.name = "Ipv6EchoRequest", .frame = [] { return v6().icmp(128).build(); }, .rule = "echo6"},
    {.name = "NonIpPasses",
     .frame = [] { return Builder().ethertype(0x0806).build(); },
     .reason = RL_REASON_NON_IP,
     .verdict = XDP_PASS,
     .non_ip = 1},
};

const ParseCase kVlans[] = {
    {.name = "Vlan",
     .frame = [] { return Builder().vlan(10).ipv4("198.18.0.1", "192.0.2.1").udp(1, 53).build(); },
     .rule = "udp53"},
    {.name = "QinQIpv4",
     .frame =
         [] {
           return Builder()
               .vlan(10, 0x88a8)
               .vlan(20)
               .ipv4("198.18.0.1", "192.0.2.1")
               .udp(1, 53)
               .build();
         },
     .rule = "udp53"},
    {.name = "QinQIpv6",
     .frame =
         [] {
           return Builder()
               .vlan(10, 0x88a8)
               .vlan(20)
               .ipv6("2001:db8::1", "2001:db8::2")
               .udp(1, 53)
               .build();
         },
     .rule = "udp53"},
    // Stacks as deep as Linux can untag are walked.
    {.name = "DeepestVlanStackWalked",
     .frame = [] { return vlans(0, true).ipv6("2001:db8::1", "2001:db8::2").udp(1, 53).build(); },
     .rule = "udp53"},
    {.name = "ArpBehindTheDeepestVlanStack",
     .frame = [] { return vlans(0, false).ethertype(0x0806).build(); },
     .reason = RL_REASON_NON_IP,
     .non_ip = 1},
    // One tag more than the walk: what the frame carries is unknown, so it is malformed, not
    // "non-IP", and takes the malformed verdict (drop unless the policy says pass).
    {.name = "VlanStackDeeperThanTheWalkIsMalformed",
     .frame = [] { return vlans(1, false).ipv4("198.18.0.1", "192.0.2.1").udp(1, 53).build(); },
     .reason = RL_REASON_MALFORMED,
     .verdict = XDP_DROP,
     .malformed = 1},
};

const ParseCase kExtensionHeaders[] = {
    {.name = "Ipv6HopByHop",
     .frame = [] { return v6().ipv6_ext(0).udp(1, 53).build(); },
     .rule = "udp53"},
    {.name = "Ipv6ThreeExtensionHeaders",
     .frame = [] { return v6().ipv6_ext(0, 2).ipv6_ext(43, 1).ipv6_ext(60).udp(1, 53).build(); },
     .rule = "udp53"},
    {.name = "Ipv6ExtensionHeadersAtTheBound",
     .frame = [] { return ext_chain(0).udp(1, 53).build(); },
     .rule = "udp53"},
    {.name = "Ipv6AhAndRoutingBeforeIcmpv6",
     .frame = [] { return v6().ipv6_ext(51, 2).ipv6_ext(43).icmp(128).build(); },
     .rule = "echo6"},
    // Longer than the walk: the transport is not guessed at. No rule here matches without a
    // protocol, so the malformed verdict decides.
    {.name = "Ipv6ExtensionHeadersBeyondTheWalkAreMalformed",
     .frame = [] { return ext_chain(1).udp(1, 53).build(); },
     .reason = RL_REASON_MALFORMED,
     .verdict = XDP_DROP,
     .malformed = 1},
};

// First fragments have their ports; later ones have none, so only the protocol-only rule
// ("udp-any") can match them. Only later fragments are counted as fragments.
const ParseCase kFragments[] = {
    {.name = "Ipv4FirstFragment",
     .frame = [] { return v4().fragment(0, true).udp(1, 53).payload(100).build(); },
     .rule = "udp53"},
    {.name = "Ipv4LaterFragment",
     .frame = [] { return v4().fragment(100, false).udp(1, 53).payload(100).build(); },
     .rule = "udp-any",
     .fragments = 1},
    {.name = "Ipv6FirstFragment",
     .frame = [] { return v6().fragment(0, true).udp(1, 53).payload(64).build(); },
     .rule = "udp53"},
    {.name = "Ipv6LaterFragmentBehindHopByHop",
     .frame = [] { return v6().ipv6_ext(0).fragment(50, false).udp(1, 53).payload(64).build(); },
     .rule = "udp-any",
     .fragments = 1},
    // The walk stops at a later fragment's header: what follows is payload. The protocol is the
    // one declared, unknown if that is another extension header (so "udp-any" cannot match),
    // and a later fragment is not malformed.
    {.name = "Ipv6LaterFragmentDeclaringUdp",
     .frame = [] { return v6().fragment(50, false).l4_protocol(17).payload(64).build(); },
     .rule = "udp-any",
     .fragments = 1},
    {.name = "Ipv6LaterFragmentDeclaringAnExtensionHeader",
     .frame = [] { return v6().fragment(50, false).l4_protocol(60).payload(64).build(); },
     .reason = RL_REASON_UNMATCHED,
     .fragments = 1},
    // A TCP fragment cannot be a new connection: SYN-only rules do not match it.
    {.name = "Ipv4TcpSynLaterFragment",
     .frame = [] { return v4().fragment(10, false).tcp(1, 80, packet::kSyn).build(); },
     .reason = RL_REASON_UNMATCHED,
     .fragments = 1},
};

// Headers that say nonsense are malformed.
const ParseCase kNonsense[] = {
    {.name = "Ipv4HeaderLength3",
     .frame = [] { return udp4_with(14, {0x43}); },
     .reason = RL_REASON_MALFORMED,
     .malformed = 1},
    {.name = "Ipv6VersionUnderTheIpv4Ethertype",
     .frame = [] { return udp4_with(14, {0x65}); },
     .reason = RL_REASON_MALFORMED,
     .malformed = 1},
    {.name = "Ipv4TotalLengthShorterThanTheHeader",
     .frame =
         [] {
           return udp4_with(16, {0, 4});
         },
     .reason = RL_REASON_MALFORMED,
     .malformed = 1},
    // IHL 15 fits the options given; the frame is cut right after them.
    {.name = "Ipv4OptionsCutShort",
     .frame =
         [] {
           auto f = v4().ipv4_options(10).udp(1, 53).build();
           f[14] = 0x4f;
           f.resize(14 + 40);
           return f;
         },
     .reason = RL_REASON_MALFORMED,
     .malformed = 1},
    {.name = "TcpDataOffset2",
     .frame =
         [] {
           auto f = v4().tcp(1, 80, packet::kAck).build();
           f[14 + 20 + 12] = 0x20;
           return f;
         },
     .reason = RL_REASON_MALFORMED,
     .malformed = 1},
};

class ParseCaseTest : public ParseTest, public ::testing::WithParamInterface<ParseCase> {};

TEST_P(ParseCaseTest, Decides) {
  const ParseCase& c = GetParam();
  auto d = send(c.frame());
  if (c.rule) {
    EXPECT_EQ(d.reason, RL_REASON_ADMITTED);
    EXPECT_EQ(d.rule_pos, pos(c.rule)) << "expected rule " << c.rule;
  } else {
    EXPECT_EQ(d.reason, c.reason);
  }
  if (c.verdict >= 0) {
    EXPECT_EQ(d.verdict, static_cast<uint32_t>(c.verdict));
  }
  EXPECT_EQ(global(RL_GC_MALFORMED), c.malformed);
  EXPECT_EQ(global(RL_GC_FRAGMENTS), c.fragments);
  EXPECT_EQ(global(RL_GC_NON_IP), c.non_ip);
}

std::string parse_case_name(const ::testing::TestParamInfo<ParseCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Transports, ParseCaseTest, ::testing::ValuesIn(kTransports),
                         parse_case_name);
INSTANTIATE_TEST_SUITE_P(Vlans, ParseCaseTest, ::testing::ValuesIn(kVlans), parse_case_name);
INSTANTIATE_TEST_SUITE_P(ExtensionHeaders, ParseCaseTest, ::testing::ValuesIn(kExtensionHeaders),
                         parse_case_name);
INSTANTIATE_TEST_SUITE_P(Fragments, ParseCaseTest, ::testing::ValuesIn(kFragments),
                         parse_case_name);
INSTANTIATE_TEST_SUITE_P(Nonsense, ParseCaseTest, ::testing::ValuesIn(kNonsense), parse_case_name);

// The same frames one after another on one program: the counters add up.
TEST_F(ParseTest, CountersAddUpOverFrames) {
  uint64_t malformed = 0, fragments = 0, non_ip = 0;
  auto send_all = [&](const auto& table) {
    for (const ParseCase& c : table) {
      send(c.frame());
      malformed += c.malformed;
      fragments += c.fragments;
      non_ip += c.non_ip;
    }
  };
  send_all(kTransports);
  send_all(kVlans);
  send_all(kExtensionHeaders);
  send_all(kFragments);
  send_all(kNonsense);
  EXPECT_EQ(fragments, 5u);
  EXPECT_EQ(global(RL_GC_FRAGMENTS), fragments);
  EXPECT_EQ(global(RL_GC_MALFORMED), malformed);
  EXPECT_EQ(global(RL_GC_NON_IP), non_ip);
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
      auto r = hooks().run(f);
      ASSERT_TRUE(r.ok());
      auto d = hooks().last_decision();
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

// Random bytes, half of them under an IP ethertype: never an error, whatever the parser makes of
// them.
TEST_F(ParseTest, RandomFrames) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; i++) {
    std::vector<uint8_t> junk(14 + rng() % 120);
    for (auto& b : junk) b = rng();
    if (i % 2) {  // make half of them claim to be IP
      junk[12] = (i % 4 == 1) ? 0x08 : 0x86;
      junk[13] = (i % 4 == 1) ? 0x00 : 0xdd;
    }
    ASSERT_TRUE(hooks().run(junk).ok());
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
