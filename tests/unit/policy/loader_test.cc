// SPDX-License-Identifier: GPL-2.0-only
#include "policy/loader.h"

#include "policy/describe.h"
#include "policy_test_util.h"

#include <gtest/gtest.h>

namespace rl::policy {
namespace {

using test_util::all_errors;
using test_util::kSec;

Prefix P(const char* text) { return *Prefix::parse(text); }

const Rule* find_rule(const Policy& p, const std::string& name) {
  for (const auto& r : p.rules)
    if (r.name == name) return &r;
  return nullptr;
}

const SourceSet* find_set(const Policy& p, const std::string& name) {
  for (const auto& s : p.sets)
    if (s.name == name) return &s;
  return nullptr;
}

const char* kFull = R"(version: 1
malformed: drop
sets:
  office: [203.0.113.0/24, 2001:db8:100::/48]
  scanners:
    - 198.18.0.0/15
allow: [192.0.2.0/24, office]
deny: [198.51.100.7, "2001:db8::1"]
rules:
  - name: web-new-connections
    priority: 10
    match:
      sources: [scanners, 203.0.113.0/24]
      protocol: tcp
      ports: [80, 443, "8000-8100"]
      tcp_flags: syn
    limit:
      algorithm: token_bucket
      rate: 3/s
      burst: 5
    key: source_prefix
    prefix: {ipv4: 16, ipv6: 48}
    action: monitor
    block: 30s
    report: false
    cluster:
      rate: 1000/s
      on_redis_failure: closed
  - name: pings
    match:
      protocol: icmpv6
      icmp_types: [echo-request, 1]
    limit:
      algorithm: sliding_window
      rate: 6000/min
    key: rule
  - name: bandwidth
    priority: 5
    match:
      port: 53
    limit:
      rate: 10Mbit/s
      burst: 64KiB
    key: source_port
  - name: windows
    limit: {algorithm: fixed_window, rate: 100/10s}
)";

TEST(LoadString, EveryFieldReachesTheModel) {
  auto r = load_string(kFull, "full.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const Policy& p = r.policy;
  EXPECT_EQ(p.malformed, Verdict::kDrop);

  const SourceSet* office = find_set(p, "office");
  ASSERT_NE(office, nullptr);
  EXPECT_EQ(office->prefixes, (std::vector<Prefix>{P("203.0.113.0/24"), P("2001:db8:100::/48")}));
  EXPECT_EQ(office->where.str(), "full.yaml:4:3");
  const SourceSet* scanners = find_set(p, "scanners");
  ASSERT_NE(scanners, nullptr);
  EXPECT_EQ(scanners->prefixes, std::vector<Prefix>{P("198.18.0.0/15")});

  EXPECT_EQ(p.allow,
            (std::vector<Prefix>{P("192.0.2.0/24"), P("203.0.113.0/24"), P("2001:db8:100::/48")}));
  EXPECT_EQ(p.deny, (std::vector<Prefix>{P("198.51.100.7/32"), P("2001:db8::1/128")}));

  // Evaluation order: priority 5, 10, then the two defaults (100) in file order.
  ASSERT_EQ(p.rules.size(), 4u);
  EXPECT_EQ(p.rules[0].name, "bandwidth");
  EXPECT_EQ(p.rules[1].name, "web-new-connections");
  EXPECT_EQ(p.rules[2].name, "pings");
  EXPECT_EQ(p.rules[3].name, "windows");

  const Rule& web = p.rules[1];
  EXPECT_EQ(web.where.str(), "full.yaml:10:5");
  EXPECT_EQ(web.priority, 10);
  EXPECT_EQ(web.match.sources,
            (std::vector<std::string>{"scanners", "web-new-connections#inline"}));
  EXPECT_EQ(web.match.protocol, std::optional<uint8_t>(6));
  EXPECT_EQ(web.match.ports, (std::vector<PortRange>{{80, 80}, {443, 443}, {8000, 8100}}));
  EXPECT_TRUE(web.match.tcp_syn);
  EXPECT_TRUE(web.match.icmp_types.empty());
  EXPECT_EQ(web.limit.algorithm, Algorithm::kTokenBucket);
  EXPECT_EQ(web.limit.rate, (Rate{3, kSec, Unit::kPackets}));
  EXPECT_EQ(web.limit.burst, 5u);
  EXPECT_EQ(web.key, KeyKind::kSourcePrefix);
  EXPECT_EQ(web.v4_prefix, 16);
  EXPECT_EQ(web.v6_prefix, 48);
  EXPECT_EQ(web.action, Action::kMonitor);
  EXPECT_EQ(web.block_ns, 30 * kSec);
  EXPECT_FALSE(web.report);
  ASSERT_TRUE(web.cluster.has_value());
  EXPECT_EQ(web.cluster->rate, (Rate{1000, kSec, Unit::kPackets}));
  EXPECT_EQ(web.cluster->on_redis_failure, RedisFailure::kClosed);

  const SourceSet* inline_set = find_set(p, "web-new-connections#inline");
  ASSERT_NE(inline_set, nullptr);
  EXPECT_EQ(inline_set->prefixes, std::vector<Prefix>{P("203.0.113.0/24")});
  EXPECT_EQ(inline_set->where.str(), "full.yaml:13:16");

  const Rule& pings = p.rules[2];
  EXPECT_EQ(pings.priority, 100);
  EXPECT_EQ(pings.match.protocol, std::optional<uint8_t>(58));
  EXPECT_EQ(pings.match.icmp_types, (std::vector<uint8_t>{128, 1}));
  EXPECT_EQ(pings.limit.algorithm, Algorithm::kSlidingWindow);
  EXPECT_EQ(pings.limit.rate, (Rate{6000, 60 * kSec, Unit::kPackets}));
  EXPECT_EQ(pings.limit.burst, 0u);  // windows have no burst
  EXPECT_EQ(pings.key, KeyKind::kRule);

  const Rule& bw = p.rules[0];
  EXPECT_FALSE(bw.match.protocol.has_value());  // ports alone: tcp or udp, decided later
  EXPECT_EQ(bw.match.ports, (std::vector<PortRange>{{53, 53}}));
  EXPECT_EQ(bw.limit.rate, (Rate{1'250'000, kSec, Unit::kBytes}));
  EXPECT_EQ(bw.limit.burst, 65536u);
  EXPECT_EQ(bw.key, KeyKind::kSourceAddressPort);

  const Rule& win = p.rules[3];
  EXPECT_EQ(win.limit.algorithm, Algorithm::kFixedWindow);
  EXPECT_EQ(win.limit.rate, (Rate{100, 10 * kSec, Unit::kPackets}));
}

TEST(LoadString, Defaults) {
  auto r = load_string("rules:\n  - name: a\n    limit: {rate: 100/s}\n", "d.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  ASSERT_EQ(r.policy.rules.size(), 1u);
  const Rule& a = r.policy.rules[0];
  EXPECT_EQ(a.priority, 100);
  EXPECT_TRUE(a.match.sources.empty());
  EXPECT_FALSE(a.match.protocol.has_value());
  EXPECT_TRUE(a.match.ports.empty());
  EXPECT_FALSE(a.match.tcp_syn);
  EXPECT_EQ(a.limit.algorithm, Algorithm::kTokenBucket);
  EXPECT_EQ(a.limit.burst, 100u);  // default burst: the rate's amount
  EXPECT_EQ(a.key, KeyKind::kSourceAddress);
  EXPECT_EQ(a.v4_prefix, 24);
  EXPECT_EQ(a.v6_prefix, 64);
  EXPECT_EQ(a.action, Action::kDrop);
  EXPECT_EQ(a.block_ns, 0u);
  EXPECT_TRUE(a.report);
  EXPECT_FALSE(a.cluster.has_value());
  EXPECT_FALSE(a.syn_cookies);
  EXPECT_EQ(a.where.str(), "d.yaml:2:5");
  EXPECT_EQ(r.policy.malformed, Verdict::kDrop);
}

TEST(LoadString, SynCookiesOnATcpPortRule) {
  auto r = load_string(
      "rules:\n"
      "  - name: web\n"
      "    match: {protocol: tcp, ports: [80, 443]}\n"
      "    limit: {rate: 100/s}\n"
      "    syn_cookies: true\n"
      "  - name: off\n"
      "    match: {protocol: tcp, port: 22}\n"
      "    limit: {rate: 1/s}\n"
      "    syn_cookies: false\n",
      "s.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_TRUE(r.policy.rules[0].syn_cookies);
  EXPECT_FALSE(r.policy.rules[1].syn_cookies);
}

// leaky_bucket is GCRA's other name: the same limit as token_bucket, burst and all.
TEST(LoadString, LeakyBucketIsTheTokenBucketsMeter) {
  auto r = load_string(
      "rules:\n"
      "  - name: leaky\n"
      "    match: {protocol: tcp, port: 22}\n"
      "    limit: {algorithm: leaky_bucket, rate: 5/min, burst: 5}\n"
      "  - name: token\n"
      "    match: {protocol: tcp, port: 23}\n"
      "    limit: {algorithm: token_bucket, rate: 5/min, burst: 5}\n",
      "l.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const Limit& leaky = r.policy.rules[0].limit;
  const Limit& token = r.policy.rules[1].limit;
  EXPECT_EQ(leaky.algorithm, Algorithm::kTokenBucket);
  EXPECT_EQ(leaky.burst, token.burst);
  EXPECT_EQ(leaky.rate.amount, token.rate.amount);
}

// A connection limit judges new TCP connections alone: its rule matches those and no other.
TEST(LoadString, AConnectionLimitMatchesNewTcpConnections) {
  auto r = load_string(
      "rules:\n"
      "  - name: ssh\n"
      "    match: {ports: [22]}\n"
      "    limit: {connections: 4}\n"
      "    key: source\n",
      "c.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const Rule& rule = r.policy.rules[0];
  EXPECT_EQ(rule.limit.algorithm, Algorithm::kConnections);
  EXPECT_EQ(rule.limit.connections, 4u);
  EXPECT_EQ(rule.match.protocol, 6);
  EXPECT_TRUE(rule.match.tcp_syn);
  EXPECT_EQ(describe_limit(rule), "connections 4 per source");
}

TEST(LoadString, SourcePrefixDefaults) {
  auto r = load_string("rules:\n  - name: a\n    key: source_prefix\n    limit: {rate: 1/s}\n",
                       "p.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.policy.rules[0].v4_prefix, 24);
  EXPECT_EQ(r.policy.rules[0].v6_prefix, 64);
}

// An IPv6 client holds a /64: per-source keys take that prefix unless the rule names another.
TEST(LoadString, PerSourceKeysTakeTheIpv6ClientsPrefix) {
  auto r = load_string(
      "rules:\n"
      "  - name: default\n    match: {port: 1}\n    limit: {rate: 1/s}\n"
      "  - name: hosts\n    match: {port: 2}\n    key: source\n    prefix: {ipv6: 128}\n"
      "    limit: {rate: 1/s}\n"
      "  - name: ports\n    match: {port: 3}\n    key: source_port\n    prefix: {ipv6: 56}\n"
      "    limit: {rate: 1/s}\n",
      "c.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.policy.rules[0].v6_prefix, 64);
  EXPECT_EQ(r.policy.rules[1].v6_prefix, 128);
  EXPECT_EQ(r.policy.rules[2].v6_prefix, 56);
}

TEST(LoadString, DestinationsAndDestinationKeys) {
  auto r = load_string(R"(rules:
  - name: per-vip
    match: {destinations: [192.0.2.10, "3fff:0:0:1::/64"], protocol: udp}
    limit: {rate: 1000/s}
    key: destination
  - name: per-vip-net
    match: {destination: 192.0.2.0/24}
    limit: {rate: 1000/s}
    key: destination_prefix
    prefix: {ipv4: 28}
  - name: per-client-and-vip
    limit: {rate: 10/s}
    key: source_destination
)",
                       "p.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const auto& rules = r.policy.rules;
  ASSERT_EQ(rules.size(), 3u);
  ASSERT_EQ(rules[0].match.destinations.size(), 2u);
  EXPECT_EQ(rules[0].match.destinations[0].str(), "192.0.2.10/32");
  EXPECT_EQ(rules[0].match.destinations[1].str(), "3fff:0:0:1::/64");
  EXPECT_EQ(rules[0].key, KeyKind::kDestinationAddress);
  EXPECT_EQ(rules[1].key, KeyKind::kDestinationPrefix);
  EXPECT_EQ(rules[1].v4_prefix, 28);
  EXPECT_EQ(rules[1].v6_prefix, 64);
  EXPECT_EQ(rules[2].key, KeyKind::kSourceDestination);
  EXPECT_EQ(
      describe_rule(rules[0]),
      "udp to 192.0.2.10/32,3fff:0:0:1::/64; token_bucket 1000/s burst 1000 per destination; drop");
  EXPECT_EQ(
      describe_rule(rules[1]),
      "any to 192.0.2.0/24; token_bucket 1000/s burst 1000 per destination_prefix /28 /64; drop");
}

TEST(LoadString, SourcePorts) {
  auto r = load_string(R"(rules:
  - name: reflection
    match: {protocol: udp, source_ports: [19, 53, "1024-2048"]}
    limit: {rate: 1000/s}
  - name: one
    match: {source_port: 123, port: 9}
    limit: {rate: 1000/s}
  - name: one-other-dport
    match: {source_port: 123, port: 10}
    limit: {rate: 1000/s}
)",
                       "p.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const auto& m = r.policy.rules[0].match;
  ASSERT_EQ(m.source_ports.size(), 3u);
  EXPECT_EQ(m.source_ports[2], (PortRange{1024, 2048}));
  EXPECT_TRUE(m.ports.empty());
  EXPECT_EQ(describe_match(r.policy.rules[0].match), "udp sport 19,53,1024-2048");
  EXPECT_EQ(describe_match(r.policy.rules[1].match), "any sport 123 dport 9");
}

TEST(LoadString, FragmentClasses) {
  auto r = load_string(R"(
rules:
  - name: dns-first
    match: {protocol: udp, source_port: 53, fragment: first}
    limit: {rate: 1000/s}
  - name: udp-later
    match: {protocol: udp, fragment: later}
    limit: {rate: 1000/s}
  - name: any-fragment
    match: {fragment: any}
    limit: {rate: 1000/s}
  - name: whole
    match: {fragment: none}
    limit: {rate: 1000/s}
)",
                       "p.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.policy.rules[0].match.fragments, 1u << RL_FRAG_FIRST);
  EXPECT_EQ(describe_match(r.policy.rules[0].match), "udp sport 53 fragment first");
  EXPECT_EQ(describe_match(r.policy.rules[1].match), "udp fragment later");
  EXPECT_EQ(describe_match(r.policy.rules[2].match), "any fragment first,later");
  EXPECT_EQ(describe_match(r.policy.rules[3].match), "any fragment none");
}

TEST(LoadString, TcpFlagsUnderAMask) {
  auto r = load_string(R"(rules:
  - name: ack-flood
    match: {protocol: tcp, tcp_flags: {set: [ack], unset: [syn, rst, fin]}}
    limit: {rate: 1000/s}
  - name: rst-flood
    match: {protocol: tcp, tcp_flags: {set: RST}}
    limit: {rate: 1000/s}
  - name: no-ack
    match: {protocol: tcp, tcp_flags: {unset: ack}}
    limit: {rate: 1000/s}
  - name: syn
    match: {protocol: tcp, tcp_flags: syn}
    limit: {rate: 1000/s}
)",
                       "p.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.policy.rules[0].match.tcp_flags, (TcpFlags{0x17, 0x10}));
  EXPECT_EQ(r.policy.rules[1].match.tcp_flags, (TcpFlags{0x04, 0x04}));
  EXPECT_EQ(r.policy.rules[2].match.tcp_flags, (TcpFlags{0x10, 0x00}));
  EXPECT_EQ(r.policy.rules[3].match.tcp_flags, TcpFlags{});
  EXPECT_TRUE(r.policy.rules[3].match.tcp_syn);
  EXPECT_EQ(describe_match(r.policy.rules[0].match), "tcp flags ack,!fin,!syn,!rst");
  EXPECT_EQ(describe_match(r.policy.rules[1].match), "tcp flags rst");
}

TEST(LoadString, TcpFlagsInAnotherOrderAreTheSameMatch) {
  auto r = load_string(R"(rules:
  - {name: a, match: {protocol: tcp, tcp_flags: {set: [rst, ack]}}, limit: {rate: 1/s}}
  - {name: b, match: {protocol: tcp, tcp_flags: {set: [ack, rst]}}, limit: {rate: 1/s}}
)",
                       "p.yaml");
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_NE(r.errors[0].message.find("rule 'b' can never match"), std::string::npos);
}

TEST(LoadString, TcpFlagsSynIsSynWithoutAck) {
  auto r = load_string(R"(rules:
  - {name: a, match: {protocol: tcp, tcp_flags: syn}, limit: {rate: 1/s}}
  - {name: b, match: {protocol: tcp, tcp_flags: {set: syn, unset: ack}}, limit: {rate: 1/s}}
)",
                       "p.yaml");
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_NE(r.errors[0].message.find("rule 'b' can never match"), std::string::npos);
}

TEST(LoadString, TtlRanges) {
  auto r = load_string(R"(rules:
  - {name: a, match: {ttl: 0-2}, limit: {rate: 1/s}}
  - {name: b, match: {ttl: 64}, limit: {rate: 1/s}}
  - {name: c, match: {protocol: udp, ttl: ["0-2", 128, "250-255"]}, limit: {rate: 1/s}}
)",
                       "p.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.policy.rules[0].match.ttl, (std::vector<PortRange>{{0, 2}}));
  EXPECT_EQ(r.policy.rules[1].match.ttl, (std::vector<PortRange>{{64, 64}}));
  EXPECT_EQ(r.policy.rules[2].match.ttl.size(), 3u);
  EXPECT_EQ(describe_match(r.policy.rules[2].match), "udp ttl 0-2,128,250-255");
}

TEST(LoadString, IcmpCodes) {
  auto r = load_string(R"(rules:
  - name: pmtu
    match: {protocol: icmp, icmp_types: [dest-unreachable], icmp_codes: 4}
    limit: {rate: 1000/s}
  - name: v6-admin
    match: {protocol: icmpv6, icmp_types: [1], icmp_codes: [1, "5-6"]}
    limit: {rate: 1000/s}
)",
                       "p.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.policy.rules[0].match.icmp_codes, (std::vector<PortRange>{{4, 4}}));
  EXPECT_EQ(r.policy.rules[1].match.icmp_codes, (std::vector<PortRange>{{1, 1}, {5, 6}}));
  EXPECT_EQ(describe_match(r.policy.rules[0].match), "icmp type 3 code 4");
  EXPECT_EQ(describe_match(r.policy.rules[1].match), "icmpv6 type 1 code 1,5-6");
}

TEST(LoadString, LengthRanges) {
  auto r = load_string(R"(rules:
  - {name: a, match: {protocol: udp, length: 0-64}, limit: {rate: 1/s}}
  - {name: b, match: {length: [1500, "9000-65535"]}, limit: {rate: 1/s}}
)",
                       "p.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.policy.rules[0].match.length, (std::vector<PortRange>{{0, 64}}));
  EXPECT_EQ(r.policy.rules[1].match.length, (std::vector<PortRange>{{1500, 1500}, {9000, 65535}}));
  EXPECT_EQ(describe_match(r.policy.rules[1].match), "any length 1500,9000-65535");
}

TEST(LoadString, DestinationsCoveringTheSameAddressesAreTheSameMatch) {
  auto r = load_string(R"(rules:
  - {name: a, match: {destinations: [10.0.0.0/8, 10.1.0.0/16, 10.2.0.0/16]}, limit: {rate: 1/s}}
  - {name: b, match: {destination: 10.0.0.0/8}, limit: {rate: 1/s}}
  - {name: c, match: {destination: 10.1.0.0/16}, limit: {rate: 1/s}}
)",
                       "dst.yaml");
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_NE(r.errors[0].str().find("dst.yaml:3:5: error: rule 'b' can never match"),
            std::string::npos)
      << r.errors[0].str();
}

TEST(LoadString, StackedLimitsAndNewSources) {
  auto r = load_string(R"(rules:
  - name: web
    limits:
      - {rate: 3/s, burst: 5, key: source}
      - name: per-24
        algorithm: sliding_window
        rate: 50/s
        key: source_prefix
        prefix: {ipv4: 24, ipv6: 48}
      - {rate: 1000/s, key: rule}
    new_sources: {rate: 200/s, burst: 400, key: source_prefix, prefix: {ipv4: 16}}
)",
                       "p.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const Rule& rule = r.policy.rules.at(0);
  EXPECT_EQ(rule.limit.rate, (Rate{3, kSec, Unit::kPackets}));
  EXPECT_EQ(rule.limit.burst, 5u);
  EXPECT_EQ(rule.key, KeyKind::kSourceAddress);
  EXPECT_EQ(rule.limit_name, "source");
  ASSERT_EQ(rule.more.size(), 2u);
  EXPECT_EQ(rule.more[0].name, "per-24");
  EXPECT_EQ(rule.more[0].limit.algorithm, Algorithm::kSlidingWindow);
  EXPECT_EQ(rule.more[0].key, KeyKind::kSourcePrefix);
  EXPECT_EQ(rule.more[0].v4_prefix, 24);
  EXPECT_EQ(rule.more[0].v6_prefix, 48);
  EXPECT_EQ(rule.more[1].name, "rule");
  EXPECT_EQ(rule.more[1].limit.burst, 1000u);
  ASSERT_TRUE(rule.new_sources);
  EXPECT_EQ(rule.new_sources->rate, (Rate{200, kSec, Unit::kPackets}));
  EXPECT_EQ(rule.new_sources->burst, 400u);
  EXPECT_EQ(rule.new_sources->key, KeyKind::kSourcePrefix);
  EXPECT_EQ(rule.new_sources->v4_prefix, 16);
  EXPECT_EQ(rule.new_sources->v6_prefix, 48);
}

TEST(LoadString, EmptyDocumentsAndNullSectionsAreEmptyPolicies) {
  for (const char* text : {"", "# nothing yet\n", "---\n", "sets:\nallow:\ndeny:\nrules:\n"}) {
    auto r = load_string(text, "e.yaml");
    EXPECT_TRUE(r.ok()) << text << "\n" << all_errors(r);
    EXPECT_TRUE(r.policy.rules.empty());
  }
}

TEST(LoadString, IcmpNamesDependOnTheProtocol) {
  auto r = load_string(R"(rules:
  - name: v4
    match: {protocol: icmp, icmp_types: [echo-request, echo-reply, dest-unreachable, time-exceeded]}
    limit: {rate: 10/s}
  - name: v6
    match: {protocol: ICMPv6, icmp_types: [echo-request, echo-reply]}
    limit: {rate: 10/s}
  - name: numbered
    match: {protocol: 132}
    limit: {rate: 10/s}
)",
                       "icmp.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(find_rule(r.policy, "v4")->match.icmp_types, (std::vector<uint8_t>{8, 0, 3, 11}));
  EXPECT_EQ(find_rule(r.policy, "v6")->match.icmp_types, (std::vector<uint8_t>{128, 129}));
  EXPECT_EQ(find_rule(r.policy, "numbered")->match.protocol, std::optional<uint8_t>(132));
}

TEST(LoadString, ByteBurstAsPlainIntegerIsBytes) {
  auto r = load_string("rules:\n  - name: a\n    limit: {rate: 1MB/s, burst: 3000}\n", "b.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.policy.rules[0].limit.burst, 3000u);
}

TEST(LoadString, ReportsEveryErrorInDocumentOrder) {
  auto r = load_string(R"(rules:
  - name: a
    priority: high
    limit: {rate: 0/s}
  - name: b
    match: {ports: [0]}
    limit: {rate: 1/s, burts: 5}
)",
                       "many.yaml");
  ASSERT_EQ(r.errors.size(), 4u) << all_errors(r);
  EXPECT_EQ(r.errors[0].str(), "many.yaml:3:15: error: priority must be an integer, got 'high'");
  EXPECT_EQ(r.errors[1].str(), "many.yaml:4:19: error: rate '0/s' must be greater than 0");
  EXPECT_EQ(r.errors[2].str(), "many.yaml:6:21: error: port 0 is out of range (1-65535)");
  EXPECT_EQ(r.errors[3].str(),
            "many.yaml:7:24: error: unknown key 'burts' in limit (did you mean 'burst'?)");
}

TEST(LoadString, SyntaxErrorHasItsLocation) {
  auto r = load_string("rules:\n  - name: [a\n", "bad.yaml");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].where.file, "bad.yaml");
  EXPECT_GT(r.errors[0].where.line, 0);
  EXPECT_NE(r.errors[0].message.find("invalid YAML"), std::string::npos);
}

TEST(LoadString, MatchesThatDifferAnywhereAreNotShadowed) {
  auto r = load_string(R"(sets:
  a: [192.0.2.0/24]
  b: [192.0.2.0/25]
rules:
  - {name: all, limit: {rate: 1/s}}
  - {name: tcp, match: {protocol: tcp}, limit: {rate: 1/s}}
  - {name: syn, match: {protocol: tcp, tcp_flags: syn}, limit: {rate: 1/s}}
  - {name: tcp-or-udp-80, match: {port: 80}, limit: {rate: 1/s}}
  - {name: tcp-80, match: {protocol: tcp, port: 80}, limit: {rate: 1/s}}
  - {name: tcp-80-81, match: {protocol: tcp, ports: [80-81]}, limit: {rate: 1/s}}
  - {name: from-a, match: {sources: [a]}, limit: {rate: 1/s}}
  - {name: from-b, match: {sources: [b]}, limit: {rate: 1/s}}
  - {name: echo, match: {protocol: icmp, icmp_types: [echo-request]}, limit: {rate: 1/s}}
  - {name: echo6, match: {protocol: icmpv6, icmp_types: [echo-request]}, limit: {rate: 1/s}}
)",
                       "distinct.yaml");
  EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(LoadString, SourcesCoveringTheSameAddressesAreTheSameMatch) {
  auto r = load_string(R"(sets:
  wide: [10.0.0.0/8, 10.1.0.0/16]
rules:
  - {name: a, priority: 1, match: {sources: [wide]}, limit: {rate: 1/s}}
  - {name: b, priority: 2, match: {sources: [10.0.0.0/8]}, limit: {rate: 1/s}}
)",
                       "cover.yaml");
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].str(),
            "cover.yaml:5:5: error: rule 'b' can never match: rule 'a' at cover.yaml:4:5 matches "
            "the same packets first");
}

TEST(LoadString, DuplicateRulesStayOutOfThePolicy) {
  auto r = load_string(R"(rules:
  - {name: a, match: {port: 1}, limit: {rate: 1/s}}
  - {name: a, match: {port: 2}, limit: {rate: 2/s}}
)",
                       "dup.yaml");
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  ASSERT_EQ(r.policy.rules.size(), 1u);
  EXPECT_EQ(r.policy.rules[0].limit.rate.amount, 1u);
}

TEST(Diagnostic, Format) {
  Diagnostic d{{"a.yaml", 3, 7}, "something is wrong"};
  EXPECT_EQ(d.str(), "a.yaml:3:7: error: something is wrong");
  Diagnostic whole{{"missing.yaml", 0, 0}, "cannot read: No such file or directory"};
  EXPECT_EQ(whole.str(), "missing.yaml: error: cannot read: No such file or directory");
}

}  // namespace
}  // namespace rl::policy
