// SPDX-License-Identifier: GPL-2.0-only
// The compiler alone: no kernel. Checks the map entries it produces against the policy.
#include "compiler/compiler.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "compiler/bitmap.h"
#include "rl_hash.h"
#include "rl_limiter_state.h"
#include "support/builders.h"

namespace rl::testing {
namespace {

using compiler::compile;
using compiler::CompiledRuleSet;

// The entry an LPM lookup would return, computed by brute force over the compiled entries.
const rl_src_entry* lpm(const CompiledRuleSet& c, const Address& a) {
  const compiler::SourceEntry* best = nullptr;
  for (const auto& e : c.sources)
    if (e.prefix.contains(a) && (!best || e.prefix.len > best->prefix.len)) best = &e;
  return best ? &best->value : nullptr;
}

bool filter_hit(const CompiledRuleSet& c, const Address& a) {
  size_t fam6 = a.family == 6;
  uint8_t len = c.config.min_len[fam6];
  if (!len) return false;
  Prefix p = Prefix::of(a, len);
  uint32_t w[4];
  std::memcpy(w, p.addr.bytes.data(), sizeof(w));
  uint32_t h = rl_filter_hash(w, a.family);
  return (c.source_filter[fam6][h >> 6] >> (h & 63)) & 1;
}

// A rule's new-source budget compiles to a token bucket at the rule's position, carrying the
// rule's identity, so that budget keys start fresh exactly when the rule's own keys do.
TEST(Compiler, NewSourceBudgetAtTheRulesPosition) {
  policy::Policy p;
  auto plain = token_bucket("plain", 10, 10);
  auto guarded = token_bucket("guarded", 3, 5);
  policy::NewSources ns;
  ns.rate = per_second(1000);
  ns.burst = 2000;
  ns.key = policy::KeyKind::kSourcePrefix;
  ns.v4_prefix = 24;
  ns.v6_prefix = 48;
  guarded.new_sources = ns;
  p.rules = {plain, guarded};
  auto c = compile(p);
  ASSERT_TRUE(c.ok()) << c.error().str();
  ASSERT_EQ(c->new_sources.size(), 2u);
  EXPECT_FALSE(c->rules[0].flags & RL_RULE_F_NEW_SOURCES);
  EXPECT_EQ(c->new_sources[0].interval_fp, 0u);
  ASSERT_TRUE(c->rules[1].flags & RL_RULE_F_NEW_SOURCES);
  const rl_rule& b = c->new_sources[1];
  EXPECT_EQ(b.id, c->rules[1].id);
  EXPECT_EQ(b.stats_slot, c->rules[1].stats_slot);
  EXPECT_EQ(b.algo, RL_ALGO_TOKEN_BUCKET);
  EXPECT_EQ(b.cost_unit, RL_COST_PACKETS);
  EXPECT_EQ(b.key_kind, RL_KEY_SRC_PREFIX);
  EXPECT_EQ(b.v4_prefix, 24);
  EXPECT_EQ(b.v6_prefix, 48);
  EXPECT_EQ(b.interval_fp, 1'000'000ULL << 16);  // 1 ms per new source
  EXPECT_EQ(b.burst_ns, 2000 * 1'000'000ULL);
  EXPECT_EQ(b.block_ns, 0u);
  EXPECT_FALSE(b.flags & RL_RULE_F_REPORT);
}

// A per-source key is a whole IPv4 address and an IPv6 client's prefix; a change of that prefix
// is a new limiter (its keys mean other sources).
TEST(Compiler, PerSourceKeysCarryTheClientsIpv6Prefix) {
  policy::Policy p;
  auto by64 = token_bucket("by64", 10, 10);
  auto by128 = token_bucket("by128", 10, 10);
  by128.v6_prefix = 128;
  auto ports = token_bucket("ports", 10, 10);
  ports.key = policy::KeyKind::kSourceAddressPort;
  p.rules = {by64, by128, ports};
  auto c = compile(p);
  ASSERT_TRUE(c.ok()) << c.error().str();
  for (const rl_rule& r : c->rules) EXPECT_EQ(r.v4_prefix, 32);
  EXPECT_EQ(c->rules[0].v6_prefix, 64);
  EXPECT_EQ(c->rules[1].v6_prefix, 128);
  EXPECT_EQ(c->rules[2].v6_prefix, 64);

  p.rules[0].v6_prefix = 56;
  auto again = compile(p, c->ids);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->ids.by_name.at("by64").id, c->ids.by_name.at("by64").id);
  EXPECT_EQ(again->ids.by_name.at("by128").id, c->ids.by_name.at("by128").id);
}

// Turning cookies on or off changes what reaches the limit, not what a key's state means: the
// rule keeps its id and so its keys.
TEST(Compiler, SynCookiesFlagKeepsTheRulesIdentity) {
  policy::Policy p;
  auto web = token_bucket("web", 100, 100);
  web.match.protocol = 6;
  web.match.ports = {{80, 80}};
  p.rules = {web};
  auto before = compile(p);
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(before->rules[0].flags & RL_RULE_F_SYN_COOKIES);
  p.rules[0].syn_cookies = true;
  auto after = compiler::compile(p, before->ids);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->rules[0].flags & RL_RULE_F_SYN_COOKIES);
  EXPECT_EQ(after->rules[0].id, before->rules[0].id);
}

TEST(Compiler, EmptyPolicyHasDefaultsOnly) {
  auto c = compile({});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->config.rule_count, 0u);
  EXPECT_EQ(c->sources.size(), 2u);  // one /0 per family
  EXPECT_EQ(c->config.min_len[0], 0);
}

TEST(Compiler, RulesAreOrderedByPriorityThenFileOrder) {
  policy::Policy p;
  auto a = token_bucket("a", 1, 1), b = token_bucket("b", 1, 1), c = token_bucket("c", 1, 1);
  a.priority = 5;
  b.priority = 1;
  c.priority = 5;
  p.rules = {a, b, c};
  auto out = compile(p);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->names, (std::vector<std::string>{"b", "a", "c"}));
}

TEST(Compiler, FlatteningGivesEachPrefixItsAncestorsRules) {
  policy::Policy p;
  p.sets = {set("wide", {"198.18.0.0/15"}), set("narrow", {"198.18.4.0/24"})};
  p.deny = {P("198.18.4.128/25")};
  auto w = token_bucket("w", 1, 1);
  w.match.sources = {"wide"};
  auto n = token_bucket("n", 1, 1);
  n.match.sources = {"narrow"};
  auto any = token_bucket("any", 1, 1);
  p.rules = {n, w, any};
  auto c = compile(p);
  ASSERT_TRUE(c.ok());
  auto rules_at = [&](const char* addr) {
    auto e = lpm(*c, *Address::parse(addr));
    std::vector<int> r;
    for (int i = 0; i < 3; i++)
      if (compiler::bitmap_test(c->classes[e->class_id], i)) r.push_back(i);
    return r;
  };
  EXPECT_EQ(rules_at("198.18.4.1"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(rules_at("198.18.5.1"), (std::vector<int>{1, 2}));
  EXPECT_EQ(rules_at("203.0.113.1"), (std::vector<int>{2}));
  EXPECT_EQ(lpm(*c, *Address::parse("198.18.4.200"))->flags, static_cast<uint32_t>(RL_SRC_F_DENY));
  EXPECT_EQ(lpm(*c, *Address::parse("198.18.4.100"))->flags, 0u);
}

// Destinations flatten like sources; an address no entry covers takes the family's default.
TEST(Compiler, DestinationsFlattenWithAFamilyDefault) {
  policy::Policy p;
  auto net = token_bucket("net", 1, 1);
  net.match.destinations = {P("192.0.2.0/24")};
  auto host = token_bucket("host", 1, 1);
  host.match.destinations = {P("192.0.2.10"), P("192.0.2.0/25")};
  auto any = token_bucket("any", 1, 1);
  p.rules = {net, host, any};
  auto c = compile(p);
  ASSERT_TRUE(c.ok());
  auto rules_at = [&](const char* addr) {
    Address a = *Address::parse(addr);
    const compiler::SourceEntry* best = nullptr;
    for (const auto& e : c->destinations)
      if (e.prefix.contains(a) && (!best || e.prefix.len > best->prefix.len)) best = &e;
    uint32_t cls = best ? best->value.class_id : c->config.dst_default[a.family == 6];
    std::vector<int> r;
    for (int i = 0; i < 3; i++)
      if (compiler::bitmap_test(c->classes[cls], i)) r.push_back(i);
    return r;
  };
  EXPECT_EQ(rules_at("192.0.2.10"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(rules_at("192.0.2.200"), (std::vector<int>{0, 2}));
  EXPECT_EQ(rules_at("198.51.100.1"), (std::vector<int>{2}));
  EXPECT_EQ(rules_at("3fff::1"), (std::vector<int>{2}));
  EXPECT_EQ(c->destinations.size(), 2u) << "192.0.2.10 decides like its /25: dropped";
  EXPECT_EQ(c->config.dst_lpm[0], 1);
  EXPECT_EQ(c->config.dst_lpm[1], 0);
  EXPECT_EQ(c->config.dims_used, RL_DIM_DESTINATION);
}

// The data path skips a dimension whose dims_used bit (or sport_used) is clear, as if it ANDed
// in a bitmap of every rule: that is what the compiler must leave in its "none" classes then.
TEST(Compiler, DimensionsNoRuleUsesHoldEveryRule) {
  policy::Policy p;
  auto udp = token_bucket("udp", 1, 1);
  udp.match.protocol = 17;
  udp.match.ports = {{9, 9}};
  p.rules = {udp, token_bucket("any", 1, 1)};
  auto c = compile(p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->config.dims_used, 0);
  EXPECT_EQ(c->config.sport_used, 0);
  for (uint32_t cls :
       {uint32_t{c->config.dst_default[0]}, uint32_t{c->config.dst_default[1]},
        uint32_t{c->config.sport_none}, uint32_t{c->config.tcp_flags_none},
        uint32_t{c->config.ttl_none}, uint32_t{c->config.len_none}, uint32_t{RL_CLASS_NOT_SYN}})
    for (int i = 0; i < 2; i++) EXPECT_TRUE(compiler::bitmap_test(c->classes[cls], i)) << cls;

  // A rule that requires a new connection makes the not-SYN bitmap narrow: it is used.
  auto syn = token_bucket("syn", 1, 1);
  syn.match.tcp_syn = true;
  p.rules.push_back(syn);
  auto with_syn = compile(p);
  ASSERT_TRUE(with_syn.ok());
  EXPECT_EQ(with_syn->config.dims_used, RL_DIM_NEW_CONN);
  EXPECT_FALSE(compiler::bitmap_test(with_syn->classes[RL_CLASS_NOT_SYN], 2));

  // A fragment condition: each packet kind's bitmap holds the rules that admit it.
  auto later = token_bucket("later", 1, 1);
  later.match.fragments = 1u << RL_FRAG_LATER;
  p.rules.push_back(later);
  auto with_frag = compile(p);
  ASSERT_TRUE(with_frag.ok());
  EXPECT_EQ(with_frag->config.dims_used, RL_DIM_NEW_CONN | RL_DIM_FRAGMENT);
  for (unsigned j = 0; j < RL_CLASS_KINDS; j++) {
    const compiler::RuleBitmap& kind = with_frag->classes[RL_CLASS_OF_KIND(j)];
    bool is_new = j & 1, is_later = (j >> 1) == RL_FRAG_LATER;
    EXPECT_TRUE(compiler::bitmap_test(kind, 0)) << j;
    EXPECT_EQ(compiler::bitmap_test(kind, 2), is_new) << j;
    EXPECT_EQ(compiler::bitmap_test(kind, 3), is_later) << j;
  }
  EXPECT_GE(RL_CLASS_FIRST_DYNAMIC, RL_CLASS_OF_KIND(RL_CLASS_KINDS - 1) + 1);
  EXPECT_NE(RL_CLASS_OF_KIND(1), RL_CLASS_NO_PORT);
}

TEST(Compiler, RedundantPrefixesAreDropped) {
  policy::Policy p;
  p.allow = {P("198.18.0.0/16"), P("198.18.1.0/24"), P("198.18.1.1/32")};
  auto c = compile(p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->sources.size(), 3u);  // /0 for each family and the /16
}

TEST(Compiler, AllowAndDenyOfTheSamePrefixIsAnError) {
  policy::Policy p;
  p.allow = {P("198.18.0.0/16")};
  p.deny = {P("198.18.0.0/16")};
  EXPECT_FALSE(compile(p).ok());
}

TEST(Compiler, PortClassesFollowRanges) {
  policy::Policy p;
  auto a = token_bucket("a", 1, 1);
  a.match.ports = {{80, 80}, {1000, 2000}};
  auto b = token_bucket("b", 1, 1);
  b.match.ports = {{1500, 1500}};
  auto ping = token_bucket("ping", 1, 1);
  ping.match.icmp_types = {8};
  p.rules = {a, b, ping};
  auto c = compile(p);
  ASSERT_TRUE(c.ok());
  auto rules = [&](unsigned kind, unsigned port) {
    std::vector<int> r;
    for (int i = 0; i < 3; i++)
      if (compiler::bitmap_test(c->classes[c->port_classes[kind][port]], i)) r.push_back(i);
    return r;
  };
  EXPECT_EQ(rules(RL_PORT_KIND_TCP, 80), (std::vector<int>{0}));
  EXPECT_EQ(rules(RL_PORT_KIND_UDP, 1500), (std::vector<int>{0, 1}));
  EXPECT_EQ(rules(RL_PORT_KIND_UDP, 2001), (std::vector<int>{}));
  // ICMP: type * 256 + code.
  EXPECT_EQ(rules(RL_PORT_KIND_ICMP, 8 * 256), (std::vector<int>{2}));
  EXPECT_EQ(rules(RL_PORT_KIND_ICMP, 8 * 256 + 255), (std::vector<int>{2}));
  EXPECT_EQ(rules(RL_PORT_KIND_ICMP, 80), (std::vector<int>{}));
  EXPECT_EQ(rules(RL_PORT_KIND_ICMP, 9 * 256), (std::vector<int>{}));
  EXPECT_FALSE(compiler::bitmap_test(c->classes[RL_CLASS_NO_PORT], 0));
}

// Each port's class holds exactly the rules whose ranges hold it, for random overlapping ranges,
// ICMP types and codes, and source ports: the sweep re-asks a rule only at its own bounds.
TEST(Compiler, PortClassesAgreeWithEveryRuleAtEveryPort) {
  std::mt19937 rng(11);
  auto range = [&](unsigned span) {
    auto lo = static_cast<uint16_t>(rng() % 65536);
    auto hi = static_cast<uint16_t>(std::min<unsigned>(65535, lo + rng() % span));
    return policy::PortRange{lo, hi};
  };
  policy::Policy p;
  for (int i = 0; i < 300; i++) {
    auto r = token_bucket("r" + std::to_string(i), 1, 1);
    switch (i % 4) {
      case 0:
        r.match.ports = {range(8), range(3000)};
        break;
      case 1:
        r.match.icmp_types = {static_cast<uint8_t>(rng() % 4 + 3)};
        if (i % 8 == 1) r.match.icmp_codes = {{static_cast<uint16_t>(rng() % 5), 9}};
        break;
      case 2:
        r.match.source_ports = {range(20000)};
        break;
      default:
        break;
    }
    p.rules.push_back(r);
  }
  auto c = compile(p);
  ASSERT_TRUE(c.ok()) << c.error().str();
  auto in = [](const std::vector<policy::PortRange>& rs, unsigned v) {
    for (const auto& r : rs)
      if (v >= r.first && v <= r.last) return true;
    return false;
  };
  for (unsigned v = 0; v < RL_PORT_VALUES; v += 1 + rng() % 7) {
    for (size_t pos = 0; pos < p.rules.size(); pos++) {
      const auto& m = p.rules[pos].match;  // no priorities: positions are the policy order
      const bool icmp_ok = !m.icmp_types.empty() && m.icmp_types[0] == v / 256 &&
                           (m.icmp_codes.empty() || in(m.icmp_codes, v % 256));
      const bool any = m.ports.empty() && m.icmp_types.empty();
      const bool tcp = any || in(m.ports, v);
      const bool icmp = any || icmp_ok;
      ASSERT_EQ(compiler::bitmap_test(c->classes[c->port_classes[RL_PORT_KIND_TCP][v]], pos), tcp)
          << pos << " " << v;
      ASSERT_EQ(compiler::bitmap_test(c->classes[c->port_classes[RL_PORT_KIND_UDP][v]], pos), tcp)
          << pos << " " << v;
      ASSERT_EQ(compiler::bitmap_test(c->classes[c->port_classes[RL_PORT_KIND_ICMP][v]], pos), icmp)
          << pos << " " << v;
      const bool sport = m.source_ports.empty() || in(m.source_ports, v);
      ASSERT_EQ(compiler::bitmap_test(c->classes[c->port_classes[RL_SPORT_TABLE][v]], pos), sport)
          << pos << " " << v;
    }
  }
}

TEST(Compiler, TcpFlagClassesFollowTheMask) {
  policy::Policy p;
  auto ack = token_bucket("ack", 1, 1);
  ack.match.protocol = 6;
  ack.match.tcp_flags = {0x17, 0x10};  // ACK without SYN, RST, FIN
  auto rst = token_bucket("rst", 1, 1);
  rst.match.protocol = 6;
  rst.match.tcp_flags = {0x04, 0x04};
  auto any = token_bucket("any", 1, 1);
  p.rules = {ack, rst, any};
  auto c = compile(p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->config.dims_used, RL_DIM_TCP_FLAGS);
  const auto& t = c->byte_classes[RL_BYTE_TABLE_TCP_FLAGS];
  ASSERT_EQ(t.size(), 256u);
  for (unsigned f = 0; f < 256; f++) {
    const compiler::RuleBitmap& b = c->classes[t[f]];
    EXPECT_EQ(compiler::bitmap_test(b, 0), (f & 0x17) == 0x10) << f;
    EXPECT_EQ(compiler::bitmap_test(b, 1), (f & 0x04) != 0) << f;
    EXPECT_TRUE(compiler::bitmap_test(b, 2)) << f;
  }
  const compiler::RuleBitmap& none = c->classes[c->config.tcp_flags_none];
  EXPECT_FALSE(compiler::bitmap_test(none, 0));
  EXPECT_FALSE(compiler::bitmap_test(none, 1));
  EXPECT_TRUE(compiler::bitmap_test(none, 2));
  // Only the flags values in use cost classes: 4 flag combinations, not 256.
  std::set<uint16_t> distinct(t.begin(), t.end());
  EXPECT_LE(distinct.size(), 4u);
}

TEST(Compiler, TtlClassesFollowRanges) {
  policy::Policy p;
  auto low = token_bucket("low", 1, 1);
  low.match.ttl = {{0, 2}, {255, 255}};
  p.rules = {low, token_bucket("any", 1, 1)};
  auto c = compile(p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->config.dims_used, RL_DIM_TTL);
  EXPECT_TRUE(c->byte_classes[RL_BYTE_TABLE_TCP_FLAGS].empty());
  const auto& t = c->byte_classes[RL_BYTE_TABLE_TTL];
  ASSERT_EQ(t.size(), 256u);
  for (unsigned v = 0; v < 256; v++) {
    EXPECT_EQ(compiler::bitmap_test(c->classes[t[v]], 0), v <= 2 || v == 255) << v;
    EXPECT_TRUE(compiler::bitmap_test(c->classes[t[v]], 1)) << v;
  }
  EXPECT_EQ(std::set<uint16_t>(t.begin(), t.end()).size(), 2u);
}

TEST(Compiler, IcmpCodesNarrowTheirTypes) {
  policy::Policy p;
  auto pmtu = token_bucket("pmtu", 1, 1);
  pmtu.match.protocol = 1;
  pmtu.match.icmp_types = {3};
  pmtu.match.icmp_codes = {{4, 4}, {10, 12}};
  auto v6 = token_bucket("v6", 1, 1);
  v6.match.protocol = 58;
  v6.match.icmp_types = {1, 3};
  p.rules = {pmtu, v6};
  auto c = compile(p);
  ASSERT_TRUE(c.ok());
  for (unsigned kind : {RL_PORT_KIND_ICMP, RL_PORT_KIND_ICMPV6})
    for (unsigned i = 0; i < 65536; i++) {
      unsigned type = i >> 8, code = i & 255;
      const compiler::RuleBitmap& b = c->classes[c->port_classes[kind][i]];
      // Both rules admit either ICMP kind here: the protocol is its own dimension.
      EXPECT_EQ(compiler::bitmap_test(b, 0), type == 3 && (code == 4 || (code >= 10 && code <= 12)))
          << kind << " " << i;
      EXPECT_EQ(compiler::bitmap_test(b, 1), type == 1 || type == 3) << kind << " " << i;
    }
}

TEST(Compiler, LengthClassesFollowRanges) {
  policy::Policy p;
  auto small = token_bucket("small", 1, 1);
  small.match.length = {{0, 64}, {1400, 1500}};
  p.rules = {small, token_bucket("any", 1, 1)};
  auto c = compile(p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->config.dims_used, RL_DIM_LENGTH);
  const auto& t = c->port_classes[RL_LEN_TABLE];
  ASSERT_EQ(t.size(), 65536u);
  for (unsigned v : {0u, 64u, 65u, 1399u, 1400u, 1500u, 1501u, 65535u}) {
    bool in = v <= 64 || (v >= 1400 && v <= 1500);
    EXPECT_EQ(compiler::bitmap_test(c->classes[t[v]], 0), in) << v;
    EXPECT_TRUE(compiler::bitmap_test(c->classes[t[v]], 1)) << v;
  }
  EXPECT_FALSE(compiler::bitmap_test(c->classes[c->config.len_none], 0));
  EXPECT_TRUE(compiler::bitmap_test(c->classes[c->config.len_none], 1));
  // A policy without lengths leaves the table out.
  p.rules = {token_bucket("any", 1, 1)};
  auto plain = compile(p);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->config.dims_used, 0);
  EXPECT_TRUE(plain->port_classes[RL_LEN_TABLE].empty());
}

TEST(Compiler, IdentitiesSurviveUnchangedLimiters) {
  policy::Policy p;
  p.rules = {token_bucket("keep", 1, 1), token_bucket("change", 1, 1)};
  auto first = compile(p);
  ASSERT_TRUE(first.ok());
  p.rules[1].limit.burst = 2;
  p.rules[0].match.protocol = 6;  // match changes do not reset state
  auto second = compile(p, first->ids);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->ids.by_name.at("keep").id, first->ids.by_name.at("keep").id);
  EXPECT_NE(second->ids.by_name.at("change").id, first->ids.by_name.at("change").id);
  EXPECT_EQ(second->ids.by_name.at("change").stats_slot,
            first->ids.by_name.at("change").stats_slot);
  EXPECT_TRUE(second->new_slots.empty());
}

TEST(Compiler, ClockChoiceFollowsBucketSize) {
  compiler::CompileOptions o;
  o.coarse_clock_ns = 4'000'000;
  auto slow = compiler::compile_limit(token_bucket("slow", 3, 5), o);        // 1.67 s bucket
  auto fast = compiler::compile_limit(token_bucket("fast", 100000, 10), o);  // 0.1 ms bucket
  ASSERT_TRUE(slow.ok() && fast.ok());
  EXPECT_FALSE(slow->flags & RL_RULE_F_PRECISE_CLOCK);
  EXPECT_TRUE(fast->flags & RL_RULE_F_PRECISE_CLOCK);
}

TEST(Compiler, LimitsAreEnforced) {
  policy::Policy p;
  for (int i = 0; i <= RL_DEFAULT_MAX_RULES; i++)
    p.rules.push_back(token_bucket("r" + std::to_string(i), 1, 1));
  auto over = compile(p);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().message.find("rld.yaml max_rules"), std::string::npos)
      << over.error().message;
  compiler::CompileOptions bigger;
  bigger.max_rules = 2 * RL_DEFAULT_MAX_RULES;
  auto fits = compiler::compile(p, {}, bigger);
  ASSERT_TRUE(fits.ok()) << fits.error().str();
  // Stats slots come from both generations' ids: at most two per rule the data path holds.
  for (const auto& r : fits->rules) EXPECT_LT(r.stats_slot, 2u * bigger.max_rules);
  auto sw = window("sw", policy::Algorithm::kSlidingWindow, 1 << 20, 1'000'000'000);
  EXPECT_FALSE(compiler::compile_limit(sw).ok());
}

// A log's tick is the finest power of two whose window fits the age fields of its entries.
TEST(Compiler, SlidingLogTicks) {
  for (uint64_t n : {1, 2, 5, 8}) {
    auto r =
        compiler::compile_limit(window("log", policy::Algorithm::kSlidingLog, n, 60'000'000'000));
    ASSERT_TRUE(r.ok()) << r.error().str();
    EXPECT_EQ(r->algo, RL_ALGO_SLIDING_LOG);
    EXPECT_EQ(r->limit, n);
    EXPECT_EQ(r->window_ns, 60'000'000'000u);
    uint64_t tick = uint64_t{1} << r->cost_shift;
    uint64_t ticks = (r->window_ns + tick - 1) / tick;
    EXPECT_LE(ticks, rl_sl_max_ticks(n)) << "n " << n;
    EXPECT_GT((r->window_ns + tick / 2 - 1) / (tick / 2), rl_sl_max_ticks(n)) << "n " << n;
  }
  auto five =
      compiler::compile_limit(window("log", policy::Algorithm::kSlidingLog, 5, 60'000'000'000));
  ASSERT_TRUE(five.ok());
  EXPECT_EQ(five->cost_shift, 28) << "5 a minute: ticks of 268 ms, 224 to the window";
  auto nine = window("log", policy::Algorithm::kSlidingLog, 9, 1'000'000'000);
  EXPECT_FALSE(compiler::compile_limit(nine).ok());
}

// A connection limit is its count alone; a rule that would judge more than new TCP connections,
// or needs a key's state beside the count, is refused.
TEST(Compiler, ConnectionLimits) {
  auto r = compiler::compile_limit(connections("ssh", 4));
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->algo, RL_ALGO_CONNECTIONS);
  EXPECT_EQ(r->limit, 4u);
  EXPECT_EQ(r->block_ns, 0u);
  auto any_packet = connections("ssh", 4);
  any_packet.match.tcp_syn = false;
  EXPECT_FALSE(compiler::compile_limit(any_packet).ok());
  auto blocked = connections("ssh", 4);
  blocked.block_ns = 1'000'000'000;
  EXPECT_FALSE(compiler::compile_limit(blocked).ok());
}

// The source filter may only say "no entry here" when the LPM answer is the /0 entry.
// A random address in the documentation ranges, IPv4 with probability v4_in / v4_of.
Address random_address(std::mt19937& rng, unsigned v4_in, unsigned v4_of) {
  Address a;
  a.family = rng() % v4_of < v4_in ? 4 : 6;
  auto b = [&](unsigned mod) { return static_cast<uint8_t>(rng() % mod); };
  if (a.family == 4)
    a.bytes = {198, static_cast<uint8_t>(18 + b(2)), b(256), b(256)};
  else
    a.bytes = {0x20, 0x01, 0x0d, 0xb8, b(4), b(256), 0, 0, 0, 0, 0, 0, 0, 0, 0, b(256)};
  return a;
}

TEST(Compiler, SourceFilterHasNoFalseNegatives) {
  std::mt19937 rng(11);
  for (int round = 0; round < 20; round++) {
    policy::Policy p;
    policy::SourceSet s{"s", {}, {}};
    for (int i = 0; i < 200; i++) {
      Address a = random_address(rng, 2, 3);
      uint8_t len = a.family == 4 ? 16 + rng() % 17 : 32 + rng() % 97;
      s.prefixes.push_back(Prefix::of(a, len));
    }
    p.sets = {s};
    auto r = token_bucket("r", 1, 1);
    r.match.sources = {"s"};
    p.rules = {r};
    auto c = compile(p);
    ASSERT_TRUE(c.ok());
    for (int i = 0; i < 5000; i++) {
      Address a = random_address(rng, 1, 2);
      const rl_src_entry* e = lpm(*c, a);
      if (!filter_hit(*c, a)) {
        const auto& def = c->config.defaults[a.family == 6];
        ASSERT_EQ(e->class_id, def.class_id) << a.str();
        ASSERT_EQ(e->flags, def.flags) << a.str();
      }
    }
  }
}

// The flattened entries against their meaning: an address satisfies a rule's source condition
// when one of the rule's sets lists a prefix covering it (or the rule names none), and the most
// specific allow or deny entry covering it decides its list, over random sets shared by rules.
TEST(Compiler, FlattenedSourcesAnswerWhatTheSetsAndListsSay) {
  std::mt19937 rng(5);
  for (int round = 0; round < 40; round++) {
    policy::Policy p;
    for (int s = 0; s < 4; s++) {
      policy::SourceSet set{"s" + std::to_string(s), {}, {}};
      for (int i = 0; i < 30; i++) {
        Address a = random_address(rng, 2, 3);
        uint8_t len = a.family == 4 ? 15 + rng() % 18 : 30 + rng() % 99;
        set.prefixes.push_back(Prefix::of(a, len));
      }
      p.sets.push_back(set);
    }
    for (int i = 0; i < 6; i++) {
      Address a = random_address(rng, 2, 3);
      Prefix pre = Prefix::of(a, a.family == 4 ? 17 + rng() % 16 : 33 + rng() % 96);
      (i % 2 ? p.allow : p.deny).push_back(pre);
    }
    std::sort(p.allow.begin(), p.allow.end());
    p.allow.erase(std::unique(p.allow.begin(), p.allow.end()), p.allow.end());
    std::erase_if(p.deny, [&](const Prefix& d) {
      return std::find(p.allow.begin(), p.allow.end(), d) != p.allow.end();
    });
    for (int r = 0; r < 6; r++) {
      auto rule = token_bucket("r" + std::to_string(r), 1, 1);
      for (int s = 0; s < 4; s++)
        if (rng() % 3 == 0) rule.match.sources.push_back("s" + std::to_string(s));
      p.rules.push_back(rule);
    }
    auto c = compile(p);
    ASSERT_TRUE(c.ok()) << c.error().str();
    for (int i = 0; i < 3000; i++) {
      Address a = random_address(rng, 1, 2);
      const rl_src_entry* e = lpm(*c, a);
      ASSERT_NE(e, nullptr);
      for (size_t pos = 0; pos < p.rules.size(); pos++) {
        bool want = p.rules[pos].match.sources.empty();
        for (const auto& name : p.rules[pos].match.sources)
          for (const auto& set : p.sets)
            if (set.name == name)
              for (const auto& pre : set.prefixes) want = want || pre.contains(a);
        ASSERT_EQ(compiler::bitmap_test(c->classes[e->class_id], pos), want)
            << a.str() << " rule " << pos << " round " << round;
      }
      uint32_t flags = 0;
      int best = -1;
      for (uint32_t f : {RL_SRC_F_ALLOW, RL_SRC_F_DENY})
        for (const auto& pre : f == RL_SRC_F_ALLOW ? p.allow : p.deny)
          if (pre.contains(a) && pre.len > best) {
            best = pre.len;
            flags = f;
          }
      ASSERT_EQ(e->flags, flags) << a.str() << " round " << round;
    }
  }
}

// rld.yaml's source_prefixes bounds the flattened entries of each family.
TEST(Compiler, SourcePrefixesAreBoundedPerFamily) {
  policy::Policy p;
  policy::SourceSet set{"s", {}, {}};
  for (uint32_t i = 0; i < 100; i++)
    set.prefixes.push_back(P("198.18." + std::to_string(i) + ".0/24"));
  p.sets = {set};
  auto r = token_bucket("r", 1, 1);
  r.match.sources = {"s"};
  p.rules = {r};
  compiler::CompileOptions o;
  o.source_prefixes = 101;  // the /0 and the 100
  EXPECT_TRUE(compile(p, {}, o).ok());
  o.source_prefixes = 100;
  auto c = compile(p, {}, o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().err, E2BIG);
  EXPECT_NE(c.error().message.find("more than 100 IPv4 source prefixes"), std::string::npos);
}

}  // namespace
}  // namespace rl::testing
