// SPDX-License-Identifier: GPL-2.0-only
// Random policies and random frames (valid, truncated, junk) through the kernel program and
// through the reference model: every decision must be identical.
#include <random>

#include "fixture.h"
#include "model.h"
#include "rl_limiter_state.h"

namespace rl::testing {
namespace {

class Gen {
 public:
  // The field generator's seed is the product modulo 2^32.
  explicit Gen(uint32_t seed) : rng_(seed), fields_(static_cast<uint32_t>(seed * 7919)) {}
  uint32_t u(uint32_t n) { return rng_() % n; }
  bool coin(int pct = 50) { return u(100) < static_cast<uint32_t>(pct); }
  // Draws for the TTL, ICMP code and length, from a stream of their own: adding a dimension
  // leaves the rest of each policy and frame as it was, and with it what they exercise.
  uint32_t fu(uint32_t n) { return fields_() % n; }
  bool fcoin(int pct = 50) { return fu(100) < static_cast<uint32_t>(pct); }

  Address v4() {
    Address a;
    a.family = 4;
    a.bytes[0] = 198;
    a.bytes[1] = 18 + u(2);
    a.bytes[2] = u(2);
    a.bytes[3] = u(4);
    return a;
  }
  Address v6() {
    Address a;
    a.family = 6;
    uint8_t base[] = {0x20, 0x01, 0x0d, 0xb8};
    std::copy(base, base + 4, a.bytes.begin());
    a.bytes[5] = u(3);
    a.bytes[7] = u(3);
    a.bytes[15] = u(4);
    return a;
  }
  Prefix prefix() {
    if (coin(70)) {
      static const uint8_t lens[] = {15, 16, 22, 24, 30, 32};
      return Prefix::of(v4(), lens[u(6)]);
    }
    static const uint8_t lens[] = {32, 40, 48, 64, 120, 128};
    return Prefix::of(v6(), lens[u(6)]);
  }
  // Destinations: a few lab hosts per family, so destination conditions and keys both hit and miss.
  Address dst4() { return Address{4, {192, 0, 2, static_cast<uint8_t>(u(4))}}; }
  Address dst6() {
    Address a;
    a.family = 6;
    a.bytes[0] = 0x3f;
    a.bytes[1] = 0xff;
    a.bytes[7] = static_cast<uint8_t>(u(2));
    a.bytes[15] = static_cast<uint8_t>(u(3));
    return a;
  }
  Prefix dst_prefix() {
    if (coin(60)) {
      static const uint8_t lens[] = {24, 31, 32};
      return Prefix::of(dst4(), lens[u(3)]);
    }
    static const uint8_t lens[] = {48, 64, 127, 128};
    return Prefix::of(dst6(), lens[u(4)]);
  }
  // Reflection sources (DNS, NTP, memcached, SSDP, chargen) and ephemeral ones.
  uint16_t sport() {
    static const uint16_t ports[] = {19, 53, 123, 1900, 11211, 1000, 40000};
    return ports[u(7)];
  }
  uint16_t port() {
    static const uint16_t ports[] = {22, 53, 80, 443, 8080, 9000, 40000};
    return ports[u(7)];
  }

  uint8_t icmp_code() {
    static const uint8_t codes[] = {0, 0, 1, 3, 4, 13};
    return fcoin(90) ? codes[fu(6)] : static_cast<uint8_t>(fu(256));
  }

  uint8_t tcp_flags() {
    using namespace packet;
    static const uint8_t common[] = {kSyn,        kAck,        kSyn | kAck, kRst,
                                     kRst | kAck, kFin | kAck, kPsh | kAck, kFin};
    return coin(85) ? common[u(8)] : static_cast<uint8_t>(u(256));
  }

  // Rule names carry `tag`, so each policy's rules are new incarnations with fresh keys.
  policy::Policy policy(const std::string& tag) {
    policy::Policy p;
    int nsets = u(4);
    for (int s = 0; s < nsets; s++) {
      policy::SourceSet set;
      set.name = "s" + std::to_string(s);
      for (int i = 0, n = 1 + u(4); i < n; i++) set.prefixes.push_back(prefix());
      p.sets.push_back(set);
    }
    bool lists = coin(30);
    for (int i = 0, n = lists ? u(3) : 0; i < n; i++) p.allow.push_back(prefix());
    for (int i = 0, n = lists ? u(3) : 0; i < n; i++) {
      Prefix d = prefix();
      if (std::find(p.allow.begin(), p.allow.end(), d) == p.allow.end()) p.deny.push_back(d);
    }
    p.malformed = coin() ? policy::Verdict::kDrop : policy::Verdict::kPass;
    for (int r = 0, n = 1 + u(12); r < n; r++)
      p.rules.push_back(rule(tag + "r" + std::to_string(r), nsets));
    return p;
  }

  policy::Rule rule(const std::string& name, int nsets) {
    policy::Rule r;
    r.name = name;
    r.priority = u(5);
    random_match(r.match, nsets);
    random_limits(r);
    return r;
  }

  // The conditions of a rule: sources, destinations, protocol, ports and header fields.
  void random_match(policy::Match& m, int nsets) {
    if (nsets && coin(40))
      for (int i = 0, n = 1 + u(2); i < n; i++) m.sources.push_back("s" + std::to_string(u(nsets)));
    if (coin(30))
      for (int i = 0, n = 1 + u(2); i < n; i++) {
        Prefix d = dst_prefix();
        if (std::find(m.destinations.begin(), m.destinations.end(), d) == m.destinations.end())
          m.destinations.push_back(d);
      }
    static const int protos[] = {-1, 6, 17, 1, 58, 47};
    int proto = protos[u(6)];
    if (proto >= 0) m.protocol = proto;
    if ((proto == -1 || proto == 6 || proto == 17) && coin(50)) {
      for (int i = 0, n = 1 + u(3); i < n; i++) {
        uint16_t a = port(), b = coin(30) ? port() : a;
        m.ports.push_back({std::min(a, b), std::max(a, b)});
      }
    }
    if ((proto == -1 || proto == 6 || proto == 17) && coin(25)) {
      for (int i = 0, n = 1 + u(2); i < n; i++) {
        uint16_t a = sport(), b = coin(30) ? sport() : a;
        m.source_ports.push_back({std::min(a, b), std::max(a, b)});
      }
    }
    if (proto == 6 && coin(40)) m.tcp_syn = true;
    if (proto == 6 && coin(60)) {
      // Flood shapes: one or two of SYN, ACK, RST, FIN, PSH required set or clear.
      static const uint8_t bits[] = {packet::kSyn, packet::kAck, packet::kRst, packet::kFin,
                                     packet::kPsh};
      for (int i = 0, n = 1 + u(2); i < n; i++) {
        uint8_t bit = bits[u(5)];
        m.tcp_flags.mask |= bit;
        m.tcp_flags.value = coin() ? m.tcp_flags.value | bit : m.tcp_flags.value & ~bit;
      }
    }
    if (fcoin(15)) {
      // Traceroute and TTL-expiry probes (0-2), one OS's default (64, 128), or a wide range.
      static const policy::PortRange ttls[] = {{0, 2}, {1, 1}, {64, 64}, {0, 63}, {128, 255}};
      for (int i = 0, n = 1 + fu(2); i < n; i++) m.ttl.push_back(ttls[fu(5)]);
    }
    if (fcoin(20)) {
      // Bare segments and tiny datagrams, full-size packets, or a random range.
      static const policy::PortRange lens[] = {{0, 64}, {40, 60}, {0, 100}, {1000, 65535}};
      for (int i = 0, n = 1 + fu(2); i < n; i++) {
        uint16_t a = static_cast<uint16_t>(fu(1600)), b = static_cast<uint16_t>(fu(1600));
        m.length.push_back(fcoin(70) ? lens[fu(4)]
                                     : policy::PortRange{std::min(a, b), std::max(a, b)});
      }
    }
    if (fcoin(12)) {
      // Not a fragment, the first, the later ones, or either; the policy refuses a transport
      // condition beside later fragments, which carry no transport header.
      static const uint8_t masks[] = {1u << RL_FRAG_NONE, 1u << RL_FRAG_FIRST, 1u << RL_FRAG_LATER,
                                      (1u << RL_FRAG_FIRST) | (1u << RL_FRAG_LATER)};
      m.fragments = masks[fu(4)];
      bool transport = !m.ports.empty() || !m.source_ports.empty() || m.tcp_syn ||
                       m.tcp_flags.mask || proto == 1 || proto == 58;
      if (transport && (m.fragments & (1u << RL_FRAG_LATER))) m.fragments = 1u << RL_FRAG_FIRST;
    }
    if ((proto == 1 || proto == 58) && coin(60)) {
      m.icmp_types = {static_cast<uint8_t>(proto == 1 ? 8 : 128)};
      // Destination unreachable (3 and 1) under some of its codes, or echo with code 0 only.
      if (fcoin(50)) m.icmp_types = {static_cast<uint8_t>(proto == 1 ? 3 : 1)};
      static const policy::PortRange codes[] = {{0, 0}, {1, 3}, {4, 4}, {0, 15}};
      if (fcoin(50))
        for (int i = 0, n = 1 + fu(2); i < n; i++) m.icmp_codes.push_back(codes[fu(4)]);
    }
  }

  // A packet limit turned into a sliding log of 1 to RL_SL_MAX_ENTRIES entries.
  void sliding_log(policy::Limit& l) {
    l.algorithm = policy::Algorithm::kSlidingLog;
    l.rate.amount = 1 + fu(RL_SL_MAX_ENTRIES);
    l.burst = 0;
  }

  // A rule's limit, key, action, stacked limits and new-source budget.
  void random_limits(policy::Rule& r) {
    static const policy::Algorithm algos[] = {policy::Algorithm::kTokenBucket,
                                              policy::Algorithm::kFixedWindow,
                                              policy::Algorithm::kSlidingWindow};
    r.limit.algorithm = algos[u(3)];
    bool bytes = coin(20);
    uint64_t period = coin() ? kSec : kSec / 10;
    if (bytes) {
      r.limit.rate = {500 + u(5000), period, policy::Unit::kBytes};
      if (r.limit.algorithm == policy::Algorithm::kTokenBucket) r.limit.burst = 200 + u(3000);
    } else {
      r.limit.rate = {1 + u(20), period, policy::Unit::kPackets};
      if (r.limit.algorithm == policy::Algorithm::kTokenBucket) r.limit.burst = 1 + u(5);
    }
    // From the field stream, so that the draws above keep their shape for older seeds.
    if (!bytes && fcoin(15)) sliding_log(r.limit);
    static const policy::KeyKind keys[] = {
        policy::KeyKind::kSourceAddress,      policy::KeyKind::kSourcePrefix,
        policy::KeyKind::kSourceAddressPort,  policy::KeyKind::kRule,
        policy::KeyKind::kDestinationAddress, policy::KeyKind::kDestinationPrefix,
        policy::KeyKind::kSourceDestination};
    const uint32_t nkeys = sizeof(keys) / sizeof(keys[0]);
    r.key = keys[u(nkeys)];
    r.v4_prefix = 16 + u(17);
    r.v6_prefix = 32 + u(97);
    r.action = coin(25) ? policy::Action::kMonitor : policy::Action::kDrop;
    if (coin(20)) r.block_ns = (1 + u(3)) * kSec / 2;
    for (int i = 0, n = coin(30) ? 1 + u(3) : 0; i < n; i++) {
      policy::StackedLimit l;
      l.name = "l" + std::to_string(i + 1);
      l.limit.algorithm = algos[u(3)];
      l.limit.rate = {1 + u(20), coin() ? kSec : kSec / 10, policy::Unit::kPackets};
      if (l.limit.algorithm == policy::Algorithm::kTokenBucket) l.limit.burst = 1 + u(8);
      if (fcoin(15)) sliding_log(l.limit);
      l.key = keys[u(nkeys)];
      l.v4_prefix = 16 + u(17);
      l.v6_prefix = 32 + u(97);
      r.more.push_back(l);
    }
    bool per_source = r.key != policy::KeyKind::kRule &&
                      r.key != policy::KeyKind::kDestinationAddress &&
                      r.key != policy::KeyKind::kDestinationPrefix;
    if (per_source && coin(30)) {
      policy::NewSources ns;
      ns.rate = {1 + u(4), coin() ? kSec : kSec / 10, policy::Unit::kPackets};
      ns.burst = 1 + u(3);
      if (coin()) {
        ns.key = policy::KeyKind::kSourcePrefix;
        ns.v4_prefix = 16 + u(17);
        ns.v6_prefix = 32 + u(97);
      }
      r.new_sources = ns;
    }
  }

  // Mostly ordinary frames, and the odd ones an attacker shapes: VLAN stacks up to beyond the
  // walk, IPv6 extension-header chains up to beyond the walk (AH included), later fragments
  // declaring an extension header, and cuts inside the chain or the transport header.
  std::vector<uint8_t> frame() {
    packet::Builder b;
    int tags = u(10) == 0 ? 1 + u(RL_VLAN_MAX_TAGS + 2) : 0;
    for (int i = 0; i < tags; i++) b.vlan(u(4000), coin() ? 0x8100 : 0x88a8);
    bool is6 = coin(35);
    size_t l3 = 14 + 4 * tags, l4 = l3;  // where the IP and transport headers start
    if (is6) {
      b.ipv6_raw(v6().bytes, dst6().bytes);
      l4 += 40;
      int n = 0;
      if (coin(30)) n = coin(70) ? 1 + u(3) : u(RL_IPV6_MAX_EXT_HDRS + 4);
      for (int i = 0; i < n; i++) {
        static const uint8_t ext[] = {0, 43, 60, 51};
        uint8_t len8 = u(3);
        b.ipv6_ext(ext[u(4)], len8);
        l4 += size_t{8} * (len8 + 1);
      }
    } else {
      Address s = v4();
      Address d = dst4();
      b.ipv4_raw({s.bytes[0], s.bytes[1], s.bytes[2], s.bytes[3]},
                 {d.bytes[0], d.bytes[1], d.bytes[2], d.bytes[3]});
      l4 += 20;
      if (coin(10)) {
        uint8_t words = 1 + u(10);
        b.ipv4_options(words);
        l4 += size_t{4} * words;
      }
    }
    static const uint8_t ttls[] = {1, 2, 3, 64, 128, 255};
    b.ttl(fcoin(85) ? ttls[fu(6)] : static_cast<uint8_t>(fu(256)));
    bool fragment = coin(10);
    if (fragment) {
      b.fragment(coin() ? 0 : 1 + u(100), coin());
      if (is6) l4 += 8;
    }
    switch (u(is6 && fragment ? 6 : 5)) {
      case 0:
        b.tcp(coin() ? sport() : 1000 + u(100), port(), tcp_flags());
        break;
      case 1:
        b.udp(sport(), port());
        break;
      case 2:
        // Echo requests, and errors: time exceeded (IPv6 3) or destination unreachable (3, 1).
        b.icmp(coin() ? (is6 ? 128 : 8) : (is6 && fcoin() ? 1 : 3), icmp_code());
        break;
      case 3:
        b.l4_protocol(47);
        break;
      case 5:  // what a later fragment declares comes after it: here, more headers
        b.l4_protocol(coin() ? 60 : 0);
        break;
      default:
        b.udp(5, port());
    }
    b.payload(u(3) == 0 ? u(1400) : u(40));
    auto f = b.build();
    if (coin(10)) f.resize(14 + u(static_cast<uint32_t>(f.size() - 14)));
    if (is6 && l4 > l3 + 40 && f.size() > l3 + 41 && coin(5)) f[l3 + 41] = u(256);  // a length
    // An IP header declaring another length than the frame has: rules match the declared one.
    if (fcoin(5) && f.size() >= l3 + 6) {
      size_t at = l3 + (is6 ? 4 : 2);
      f[at] = static_cast<uint8_t>(fcoin() ? 0 : fu(256));
      f[at + 1] = static_cast<uint8_t>(fu(256));
    }
    // A cut in the IP or extension headers, or in the first bytes of the transport.
    if (coin(5) && l4 + 20 > l3 && f.size() > l3)
      f.resize(std::min(f.size(), l3 + u(static_cast<uint32_t>(l4 + 20 - l3))));
    if (coin(3)) {
      for (auto& x : f) x = static_cast<uint8_t>(rng_());
      if (coin()) f[12] = 0x08, f[13] = 0x00;
    }
    return f;
  }

 private:
  std::mt19937 rng_;
  std::mt19937 fields_;
};

class DifferentialTest : public BpfTest {};

int vlan_tags(const std::vector<uint8_t>& f) {
  int n = 0;
  for (size_t at = 12; at + 2 <= f.size(); at += 4, n++) {
    uint16_t type = (f[at] << 8) | f[at + 1];
    if (type != 0x8100 && type != 0x88a8) break;
  }
  return n;
}

TEST_F(DifferentialTest, KernelAgreesWithReferenceModel) {
  uint64_t decisions = 0, limited = 0, unadmitted = 0, stacked_refusals = 0;
  uint64_t by_destination = 0, limited_per_destination = 0, by_source_port = 0;
  uint64_t by_tcp_flags = 0, by_ttl = 0, by_icmp_code = 0, by_length = 0;
  uint64_t no_l4 = 0, no_l4_judged = 0, proto_unknown = 0, deep_vlan = 0;
  std::map<uint32_t, uint64_t> by_reason;
  for (uint32_t seed = 1; seed <= 60; seed++) {
    Gen g(seed);
    // Each policy starts from empty limiter state, as the model does: its rules are new.
    policy::Policy p = g.policy("s" + std::to_string(seed));
    apply(p);
    if (HasFatalFailure()) return;
    reference::Model model(p);
    uint64_t now = kT0;
    for (int i = 0; i < 400; i++) {
      now += g.u(32) == 0 ? g.u(300'000'000) : g.u(1'000'000);
      hooks().set_clock(now);
      auto f = g.frame();
      auto want = model.decide(f, now);
      auto got = send(f);
      ASSERT_EQ(got.reason, want.reason) << "seed " << seed << " packet " << i;
      ASSERT_EQ(got.verdict, want.verdict) << "seed " << seed << " packet " << i;
      ASSERT_EQ(got.rule_pos, want.rule_pos) << "seed " << seed << " packet " << i;
      ASSERT_EQ(got.unadmitted != 0, want.unadmitted) << "seed " << seed << " packet " << i;
      if (want.rule_pos >= 0) {
        ASSERT_EQ(got.limit, want.limit) << "seed " << seed << " packet " << i;
      }
      stacked_refusals += want.limit > 0 && want.reason != RL_REASON_ADMITTED;
      decisions++;
      by_reason[want.reason]++;
      limited += want.reason == RL_REASON_LIMITED || want.reason == RL_REASON_BLOCKED;
      unadmitted += want.unadmitted;
      if (want.rule_pos >= 0) {
        const policy::Rule& r = *model.order()[want.rule_pos];
        by_destination += !r.match.destinations.empty();
        by_source_port += !r.match.source_ports.empty();
        by_tcp_flags += r.match.tcp_flags.mask != 0;
        by_ttl += !r.match.ttl.empty();
        by_icmp_code += !r.match.icmp_codes.empty();
        by_length += !r.match.length.empty();
        bool dst_key = r.key == policy::KeyKind::kDestinationAddress ||
                       r.key == policy::KeyKind::kDestinationPrefix ||
                       r.key == policy::KeyKind::kSourceDestination;
        limited_per_destination += dst_key && want.reason == RL_REASON_LIMITED;
      }
      auto pk = reference::parse(f);
      no_l4 += pk.no_l4;
      no_l4_judged += pk.no_l4 && want.reason != RL_REASON_MALFORMED;
      proto_unknown += pk.kind == reference::Packet::kIp && !pk.proto_known;
      deep_vlan += vlan_tags(f) > RL_VLAN_MAX_TAGS;
    }
  }
  // The generator must exercise the limiters and the new-source budgets, not only the matcher,
  // and the odd frames: transports not parsed (judged by lists and rules, or not), protocols
  // unknown, VLAN stacks beyond the walk.
  EXPECT_GT(limited, decisions / 20);
  EXPECT_GT(unadmitted, decisions / 200);
  EXPECT_GT(stacked_refusals, decisions / 200);
  // ... and the destination conditions and keys.
  EXPECT_GT(by_destination, decisions / 100);
  EXPECT_GT(limited_per_destination, decisions / 200);
  EXPECT_GT(by_source_port, decisions / 100);
  EXPECT_GT(by_tcp_flags, decisions / 300);
  EXPECT_GT(by_ttl, decisions / 100);
  EXPECT_GT(by_icmp_code, decisions / 500);
  EXPECT_GT(by_length, decisions / 100);
  EXPECT_GT(no_l4, decisions / 50);
  EXPECT_GT(no_l4_judged, no_l4 / 10);
  EXPECT_GT(proto_unknown, decisions / 200);
  EXPECT_GT(deep_vlan, decisions / 500);
  std::printf(
      "differential: %lu decisions, %lu limited or blocked, %lu unadmitted, %lu refused by a "
      "stacked limit, %lu by a rule with destinations, %lu limited per destination, %lu by a rule "
      "with source ports, %lu by a rule with TCP flags, %lu by a rule with TTLs, %lu by a rule "
      "with ICMP codes, %lu by a rule with lengths\n",
      (unsigned long)decisions, (unsigned long)limited, (unsigned long)unadmitted,
      (unsigned long)stacked_refusals, (unsigned long)by_destination,
      (unsigned long)limited_per_destination, (unsigned long)by_source_port,
      (unsigned long)by_tcp_flags, (unsigned long)by_ttl, (unsigned long)by_icmp_code,
      (unsigned long)by_length);
  std::printf(
      "  transport not parsed: %lu (%lu decided by a list or rule), protocol unknown: %lu, "
      "VLAN stack beyond the walk: %lu\n",
      (unsigned long)no_l4, (unsigned long)no_l4_judged, (unsigned long)proto_unknown,
      (unsigned long)deep_vlan);
  for (auto [reason, n] : by_reason) std::printf("  reason %u: %lu\n", reason, (unsigned long)n);
}

// Connection limits against the model: rules of one connection limit, alone or stacked with a
// rate (before or after it), SYNs and other TCP packets from a few sources, and connections
// opened after admitted SYNs and closed at random, counted as rld counts them from conntrack.
TEST_F(DifferentialTest, ConnectionLimitsAgreeWithTheModel) {
  using policy::KeyKind;
  static const KeyKind keys[] = {KeyKind::kSourceAddress, KeyKind::kSourcePrefix, KeyKind::kRule,
                                 KeyKind::kDestinationAddress};
  uint64_t decisions = 0, refused = 0, opened = 0, closed = 0;
  for (uint32_t seed = 1; seed <= 30; seed++) {
    Gen g(seed);
    policy::Policy p;
    for (int i = 0, n = 1 + static_cast<int>(g.u(3)); i < n; i++) {
      policy::Rule r = connections("c" + std::to_string(seed) + "r" + std::to_string(i), 1 + g.u(4),
                                   static_cast<uint16_t>(22 + i));
      r.key = keys[g.u(4)];
      r.v4_prefix = static_cast<uint8_t>(16 + g.u(17));
      r.v6_prefix = static_cast<uint8_t>(32 + g.u(97));
      r.priority = i;
      r.action = g.coin(20) ? policy::Action::kMonitor : policy::Action::kDrop;
      if (g.coin(40)) {
        auto rate = stacked_bucket("rate", 1 + g.u(20), 1 + g.u(8), keys[g.u(4)]);
        if (g.coin()) {
          r.more = {rate};
        } else {
          policy::StackedLimit open{"open", r.limit, r.key, r.v4_prefix, r.v6_prefix};
          r.limit = rate.limit;
          r.key = rate.key;
          r.more = {open};
        }
      }
      p.rules.push_back(r);
    }
    apply(p);
    if (HasFatalFailure()) return;
    reference::Model model(p);
    std::map<uint64_t, uint32_t> counts;
    std::vector<std::pair<std::vector<uint8_t>, uint64_t>> open;  // the SYN, its key hash
    uint64_t now = kT0;
    for (int i = 0; i < 300; i++) {
      now += g.u(50'000'000);
      hooks().set_clock(now);
      bool v4 = g.coin(60);
      Address src = v4 ? g.v4() : g.v6(), dst = v4 ? g.dst4() : g.dst6();
      auto sport = static_cast<uint16_t>(40000 + g.u(50)),
           dport = static_cast<uint16_t>(22 + g.u(3));
      bool syn = g.coin(80);
      packet::Builder b;
      if (v4)
        b.ipv4(src.str(), dst.str());
      else
        b.ipv6(src.str(), dst.str());
      auto f = b.tcp(sport, dport, syn ? packet::kSyn : packet::kAck).build();
      auto want = model.decide(f, now);
      auto got = send(f);
      ASSERT_EQ(got.reason, want.reason) << "seed " << seed << " packet " << i;
      ASSERT_EQ(got.verdict, want.verdict) << "seed " << seed << " packet " << i;
      ASSERT_EQ(got.rule_pos, want.rule_pos) << "seed " << seed << " packet " << i;
      if (want.rule_pos >= 0) {
        ASSERT_EQ(got.limit, want.limit) << "seed " << seed << " packet " << i;
      }
      decisions++;
      refused += want.reason == RL_REASON_LIMITED;
      if (want.reason == RL_REASON_ADMITTED && syn && g.coin(70)) {
        rl_conn_tuple t{};
        t.family = src.family;
        std::memcpy(t.saddr, src.bytes.data(), v4 ? 4 : 16);
        std::memcpy(t.daddr, dst.bytes.data(), v4 ? 4 : 16);
        t.sport = sport;
        t.dport = dport;
        auto taken = dp_->take_admitted_syn(t);
        ASSERT_TRUE(taken.ok() && taken->has_value()) << "seed " << seed << " packet " << i;
        uint64_t h = (*taken)->hash;
        ASSERT_TRUE(dp_->set_open_connections(h, ++counts[h]).ok());
        model.connection(f, +1);
        open.emplace_back(f, h);
        opened++;
      }
      if (!open.empty() && g.coin(15)) {
        size_t k = g.u(static_cast<uint32_t>(open.size()));
        uint64_t h = open[k].second;
        ASSERT_TRUE(dp_->set_open_connections(h, --counts[h]).ok());
        model.connection(open[k].first, -1);
        open.erase(open.begin() + static_cast<std::ptrdiff_t>(k));
        closed++;
      }
    }
  }
  EXPECT_GT(refused, decisions / 20);
  EXPECT_GT(closed, opened / 3);
  std::printf("connections: %lu decisions, %lu refused, %lu connections opened, %lu closed\n",
              (unsigned long)decisions, (unsigned long)refused, (unsigned long)opened,
              (unsigned long)closed);
}

}  // namespace
}  // namespace rl::testing
