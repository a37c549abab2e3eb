// SPDX-License-Identifier: GPL-2.0-only
// The per-CPU memo of the last match (bpf/lib/memo.h): a packet with its CPU's previous packet's
// headers takes that packet's outcome only under the same rule set, and a packet that differs in
// any field a rule of the set names is matched again; fields no rule names do not count. Each test
// keeps its thread on one CPU, so that every packet meets the memo the one before it left.
#include <arpa/inet.h>
#include <sched.h>

#include <cstring>

#include "fixture.h"
#include "rl_hash.h"
#include "rl_key.h"
#include "rl_layout.h"

namespace rl::testing {
namespace {

using packet::Builder;

// Keeps the calling thread on the CPU it runs on, for the object's lifetime.
class OnOneCpu {
 public:
  OnOneCpu() {
    sched_getaffinity(0, sizeof(before_), &before_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    pinned_ = sched_setaffinity(0, sizeof(one), &one) == 0;
  }
  ~OnOneCpu() { sched_setaffinity(0, sizeof(before_), &before_); }
  OnOneCpu(const OnOneCpu&) = delete;
  OnOneCpu& operator=(const OnOneCpu&) = delete;
  bool pinned() const { return pinned_; }

 private:
  cpu_set_t before_{};
  bool pinned_ = false;
};

class MemoTest : public BpfTest {
 protected:
  // A per-source rule of rate/s, burst 1, with a budget of budget_rate new sources a second,
  // burst 1, for the whole rule.
  static policy::Rule budgeted(uint64_t rate, uint64_t budget_rate) {
    return testing::budgeted(rate, 1, budget_rate, 1);
  }

  // The i-th source of 198.18.0.0/16, none of which the table holds before it sends.
  static std::string fresh_address(int i) {
    return "198.18." + std::to_string(i / 256) + "." + std::to_string(i % 256);
  }
  static std::vector<uint8_t> fresh(int i) { return udp4(fresh_address(i)); }

  // Whether the key table's summary rules out the key of source i under the policy's one rule:
  // only such a packet meets the memo's unadmitted refusal. A key whose print a way of its set
  // shows by chance (a free way's is 0) reads its set, and is judged by the slots.
  bool screened(int i) {
    auto rules = dp_->active_rules();
    if (!rules.ok() || rules->size() != 1u) return false;
    const rl_rule& r = rules->front().second;
    __u32 saddr[4] = {}, daddr[4] = {};
    if (inet_pton(AF_INET, fresh_address(i).c_str(), saddr) != 1) return false;
    rl_key k{};
    rl_key_fill(&k, &r, 4, saddr, daddr, 53, 1);
    const uint64_t h = dp_->key_hash(k);
    const uint32_t tag = rl_key_tag(h);
    const uint32_t set =
        rl_set_index(rl_set_wide(tag, h, rl_set_low_bits(dp_->key_sets())), dp_->key_sets_active());
    uint32_t prints = 0;
    std::memcpy(&prints, dp_->key_summary()[rl_summary_line(set)].print[rl_summary_row(set)],
                sizeof(prints));
    return !rl_prints_match(prints, rl_tag_print(tag));
  }

  // The next new source, from 198.18.4.0 on, whose key the summary rules out.
  std::vector<uint8_t> screened_source() {
    while (!screened(next_)) next_++;
    return fresh(next_++);
  }

  int next_ = 1024;

  OnOneCpu cpu_;
};

// The memo's epoch is the whole rl_control.active_gen, not its generation bit: two switches
// bring a packet's generation back with another rule set, which must decide the next packet.
TEST_F(MemoTest, TwoSwitchesLaterTheSameHeadersMeetTheNewRuleSet) {
  ASSERT_TRUE(cpu_.pinned());
  const auto x = udp4("198.18.0.1");
  policy::Policy a;
  a.rules = {token_bucket("a", 1, 1)};
  apply(a);
  const uint32_t gen = dp_->active_generation();
  auto first = send(x);
  EXPECT_EQ(first.reason, RL_REASON_ADMITTED);
  EXPECT_EQ(first.rule_id, ids_.by_name.at("a").id);

  policy::Policy b = a;
  b.allow = {P("198.18.0.0/24")};
  apply(b);  // no packet meets this one
  policy::Policy c = a;
  c.deny = {P("198.18.0.1/32")};
  apply(c);
  ASSERT_EQ(dp_->active_generation(), gen) << "the generation of the first rule set again";
  EXPECT_EQ(send(x).reason, RL_REASON_DENYLIST);

  // And from a list's outcome back to a rule's.
  apply(a);
  apply(a);
  auto again = send(x);
  EXPECT_EQ(again.reason, RL_REASON_LIMITED) << "the rule's key kept its state: one per second";
  EXPECT_EQ(again.rule_id, ids_.by_name.at("a").id);
}

// Each switch, even to a rule set that decides the packet as before, is a new epoch; the
// outcomes of the lists, of no rule and of a rule all follow the rule set in force.
TEST_F(MemoTest, EveryOutcomeFollowsTheRuleSetInForce) {
  ASSERT_TRUE(cpu_.pinned());
  const auto x = udp4("198.18.0.1", 9);
  policy::Policy p;
  auto nine = token_bucket("nine", 1000, 1000);
  nine.match.ports = {{9, 9}};
  p.rules = {nine};
  apply(p);
  EXPECT_EQ(send(x).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(x).reason, RL_REASON_ADMITTED);

  p.rules[0].match.ports = {{10, 10}};
  apply(p);
  EXPECT_EQ(send(x).reason, RL_REASON_UNMATCHED);
  EXPECT_EQ(send(x).reason, RL_REASON_UNMATCHED);

  p.allow = {P("198.18.0.1/32")};
  apply(p);
  EXPECT_EQ(send(x).reason, RL_REASON_ALLOWLIST);
  EXPECT_EQ(send(x).reason, RL_REASON_ALLOWLIST);

  p.allow.clear();
  p.deny = {P("198.18.0.0/16")};
  apply(p);
  EXPECT_EQ(send(x).reason, RL_REASON_DENYLIST);

  p.deny.clear();
  p.rules[0].match.ports = {{9, 9}};
  apply(p);
  EXPECT_EQ(send(x).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(global(RL_GC_ALLOWLISTED), 2u);
  EXPECT_EQ(global(RL_GC_DENYLISTED), 1u);
  EXPECT_EQ(global(RL_GC_UNMATCHED), 2u);
}

// Packets that alternate between two headers which differ in one field only, for every field a
// rule can match on: each is matched on its own headers, never on the other's outcome.
TEST_F(MemoTest, HeadersThatDifferInOneFieldAreMatchedAgain) {
  ASSERT_TRUE(cpu_.pinned());
  policy::Policy p;
  p.sets = {set("one", {"198.18.0.1/32"})};
  auto by_source = token_bucket("source", 1000, 1000);
  by_source.match.sources = {"one"};
  auto by_dest = token_bucket("destination", 1000, 1000);
  by_dest.match.destinations = {P("192.0.2.7/32")};
  auto by_port = token_bucket("port", 1000, 1000);
  by_port.match.ports = {{7, 7}};
  auto by_sport = token_bucket("source-port", 1000, 1000);
  by_sport.match.source_ports = {{7, 7}};
  auto by_ttl = token_bucket("ttl", 1000, 1000);
  by_ttl.match.ttl = {{7, 7}};
  auto by_length = token_bucket("length", 1000, 1000);
  by_length.match.length = {{77, 77}};
  auto by_proto = token_bucket("tcp", 1000, 1000);
  by_proto.match.protocol = 6;
  auto rest = token_bucket("rest", 1000, 1000);
  p.rules = {by_source, by_dest, by_port, by_sport, by_ttl, by_length, by_proto, rest};
  apply(p);

  auto base = [] { return Builder().ipv4("198.18.0.2", "192.0.2.1").ttl(64); };
  const auto plain = base().udp(40000, 53).build();
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> others = {
      {"source", Builder().ipv4("198.18.0.1", "192.0.2.1").ttl(64).udp(40000, 53).build()},
      {"destination", Builder().ipv4("198.18.0.2", "192.0.2.7").ttl(64).udp(40000, 53).build()},
      {"port", base().udp(40000, 7).build()},
      {"source-port", base().udp(7, 53).build()},
      {"ttl", Builder().ipv4("198.18.0.2", "192.0.2.1").ttl(7).udp(40000, 53).build()},
      {"length", base().udp(40000, 53).payload(77 - 28).build()},
      {"tcp", base().tcp(40000, 53).build()},
  };
  const uint32_t rest_id = ids_.by_name.at("rest").id;
  for (const auto& [rule, frame] : others) {
    for (int round = 0; round < 3; round++) {
      EXPECT_EQ(send(plain).rule_id, rest_id) << rule << ", round " << round;
      EXPECT_EQ(send(frame).rule_id, ids_.by_name.at(rule).id) << rule << ", round " << round;
      EXPECT_EQ(send(frame).rule_id, ids_.by_name.at(rule).id) << rule << ", round " << round;
    }
  }
  // The two families' headers with the same leading bytes.
  const auto v6 = Builder().ipv6("2001:db8::1", "2001:db8::2").udp(40000, 53).build();
  EXPECT_EQ(send(v6).rule_id, rest_id);
  EXPECT_EQ(send(v6).key_hash, send(v6).key_hash);
  EXPECT_NE(send(v6).key_hash, send(plain).key_hash);
}

// The fields only some rule sets read (source port, length, TCP flags, a new connection, TTL)
// count for the memo while a rule names them, each by its own condition: with one such rule and a
// rule for the rest, packets that differ in that field alone are each matched on their own.
TEST_F(MemoTest, AFieldCountsWhileARuleNamesIt) {
  ASSERT_TRUE(cpu_.pinned());
  using packet::kAck;
  using packet::kFin;
  using packet::kSyn;
  auto base = [] { return Builder().ipv4("198.18.0.2", "192.0.2.1").ttl(64); };
  struct Case {
    std::string field;
    policy::Match names_it;
    std::vector<uint8_t> plain, other;
  };
  const std::vector<Case> cases = {
      {"source port",
       {.source_ports = {{7, 7}}},
       base().udp(40000, 53).build(),
       base().udp(7, 53).build()},
      {"length",
       {.length = {{77, 77}}},
       base().udp(40000, 53).build(),
       base().udp(40000, 53).payload(77 - 28).build()},
      {"tcp flags",
       {.tcp_flags = {.mask = kFin, .value = kFin}},
       base().tcp(40000, 53, kAck).build(),
       base().tcp(40000, 53, kAck | kFin).build()},
      {"new connection",
       {.tcp_syn = true},
       base().tcp(40000, 53, kAck).build(),
       base().tcp(40000, 53, kSyn).build()},
      {"ttl",
       {.ttl = {{7, 7}}},
       base().udp(40000, 53).build(),
       Builder().ipv4("198.18.0.2", "192.0.2.1").ttl(7).udp(40000, 53).build()},
  };
  for (const auto& c : cases) {
    policy::Policy p;
    auto named = token_bucket("named", 1000, 1000);
    named.match = c.names_it;
    p.rules = {named, token_bucket("rest", 1000, 1000)};
    apply(p);
    const uint32_t named_id = ids_.by_name.at("named").id, rest_id = ids_.by_name.at("rest").id;
    for (int round = 0; round < 3; round++) {
      EXPECT_EQ(send(c.plain).rule_id, rest_id) << c.field << ", round " << round;
      auto d = send(c.other);
      EXPECT_EQ(d.rule_id, named_id) << c.field << ", round " << round;
      EXPECT_EQ(d.memo, 0u) << c.field << ", round " << round;
      EXPECT_GE(send(c.other).memo, 1u) << c.field << ": the same headers again";
    }
  }
}

// While no rule names them, packets that differ only in those fields, or in where their headers
// lie (IP options, a VLAN tag), take the memo's outcome and key: a flood from one source with a new
// source port, length or TTL in every packet, or the packets of one TCP connection. The key's state
// is the one every packet charges, so the limit holds exactly.
TEST_F(MemoTest, FieldsNoRuleNamesShareTheMemo) {
  ASSERT_TRUE(cpu_.pinned());
  using packet::kAck;
  using packet::kPsh;
  using packet::kSyn;
  policy::Policy p;
  p.rules = {token_bucket("per-source", 1, 4)};
  apply(p);
  auto from = [](const char* src, uint8_t ttl) {
    return Builder().ipv4(src, "192.0.2.1").ttl(ttl);
  };
  const std::vector<std::vector<uint8_t>> udp = {
      from("198.18.0.1", 64).udp(40000, 53).build(),
      from("198.18.0.1", 64).udp(40001, 53).build(),
      from("198.18.0.1", 64).udp(40002, 53).payload(300).build(),
      from("198.18.0.1", 9).udp(40003, 53).payload(20).build(),
      from("198.18.0.1", 200).udp(40004, 53).build(),
      from("198.18.0.1", 64).ipv4_options(2).udp(40005, 53).build(),
      Builder().vlan(10).ipv4("198.18.0.1", "192.0.2.1").udp(40006, 53).build(),
  };
  int passed = 0;
  for (size_t i = 0; i < udp.size(); i++) {
    auto d = send(udp[i]);
    passed += d.verdict == XDP_PASS;
    EXPECT_EQ(d.memo > 0, i > 0) << "packet " << i;
  }
  EXPECT_EQ(passed, 4) << "a burst of 4, whichever packets met the memo";

  const std::vector<std::vector<uint8_t>> connection = {
      from("198.18.0.2", 64).tcp(40000, 80, kSyn).build(),
      from("198.18.0.2", 64).tcp(40000, 80, kAck).build(),
      from("198.18.0.2", 64).tcp(40000, 80, kAck | kPsh).payload(500).build(),
      from("198.18.0.2", 64).tcp(40000, 80, kAck).build(),
  };
  for (size_t i = 0; i < connection.size(); i++) {
    auto d = send(connection[i]);
    EXPECT_EQ(d.verdict, XDP_PASS) << "packet " << i;
    EXPECT_EQ(d.memo > 0, i > 0) << "packet " << i;
  }
  EXPECT_EQ(send(connection[0]).verdict, XDP_DROP) << "the fifth packet of the source's burst";

  // Another destination port is another outcome for some rule sets, and another key for some
  // rules: it counts whatever the rule set.
  EXPECT_EQ(send(from("198.18.0.2", 64).tcp(40000, 81, kAck).build()).memo, 0u);
}

// A family without source prefixes in the rule set reads no source address in the rule lookup:
// the packets of a spoofed flood, a new source each, take the memo's outcome, and each its own
// key. A family with source prefixes compares the source, so its flood misses.
TEST_F(MemoTest, SpoofedSourcesShareTheMemoWhereNoPrefixNamesThem) {
  ASSERT_TRUE(cpu_.pinned());
  policy::Policy p;
  p.rules = {token_bucket("per-source", 1, 1)};
  apply(p);
  auto v4 = [](int i) { return udp4("198.18.1." + std::to_string(i)); };
  auto v6 = [](int i) { return udp6("2001:db8::" + std::to_string(i)); };
  for (int i = 1; i <= 50; i++) {
    auto d = send(v4(i));
    EXPECT_EQ(d.reason, RL_REASON_ADMITTED) << i;
    EXPECT_EQ(d.memo > 0, i > 1) << i;
  }
  for (int i = 1; i <= 50; i++)
    EXPECT_EQ(send(v4(i)).reason, RL_REASON_LIMITED) << i << ": its own key, charged once";

  p.sets = {set("listed", {"198.18.1.0/26"})};
  auto listed = token_bucket("listed", 1000, 1000);
  listed.match.sources = {"listed"};
  p.rules.insert(p.rules.begin(), listed);
  apply(p);
  const uint32_t listed_id = ids_.by_name.at("listed").id;
  const uint32_t other_id = ids_.by_name.at("per-source").id;
  for (int i = 60; i <= 70; i++) {
    auto d = send(v4(i));
    EXPECT_EQ(d.rule_id, i < 64 ? listed_id : other_id) << i;
    EXPECT_EQ(d.memo, 0u) << i << ": IPv4 has a source prefix";
  }
  for (int i = 1; i <= 20; i++) {
    auto d = send(v6(i));
    EXPECT_EQ(d.rule_id, other_id) << i;
    EXPECT_EQ(d.memo > 0, i > 1) << i << ": IPv6 has none";
  }
}

// A key taken from the memo is the key the packet would build: its state is the one the packets
// before it charged, and a memo that kept another source's key would pass this source's packets.
TEST_F(MemoTest, ARememberedKeyIsThePacketsOwn) {
  ASSERT_TRUE(cpu_.pinned());
  policy::Policy p;
  p.rules = {token_bucket("per-source", 1, 3)};
  apply(p);
  const auto x = udp4("198.18.0.1"), y = udp4("198.18.0.2");
  EXPECT_EQ(passed(x, 5), 3);
  EXPECT_EQ(passed(y, 5), 3);
  for (int i = 0; i < 4; i++) {
    EXPECT_EQ(send(x).verdict, XDP_DROP);
    EXPECT_EQ(send(y).verdict, XDP_DROP);
  }
  hooks().set_clock(kT0 + kSec);
  EXPECT_EQ(passed(x, 3), 1) << "one second: one more packet";
  EXPECT_EQ(passed(y, 3), 1);
}

// A refused packet leaves its key's state word in the memo, and the next packets from the source
// are refused on it (memo 2) while GCRA would refuse them on that word: to the nanosecond.
TEST_F(MemoTest, ARefusalIsRepeatedUntilTheKeyMayPassAgain) {
  ASSERT_TRUE(cpu_.pinned());
  one_rule(token_bucket("per-source", 1, 3));
  const auto x = udp4("198.18.0.1");
  EXPECT_EQ(passed(x, 3), 3);
  auto d = send(x);
  EXPECT_EQ(d.reason, RL_REASON_LIMITED);
  EXPECT_EQ(d.memo, 1u) << "the first refusal is judged in the key's slot";
  for (int i = 0; i < 5; i++) {
    d = send(x);
    EXPECT_EQ(d.reason, RL_REASON_LIMITED) << i;
    EXPECT_EQ(d.memo, 2u) << i << ": the memo repeats it";
  }
  // Three packets at kT0 took the arrival time to kT0 + 3 s: with a burst of 3 seconds' worth,
  // the next may pass from kT0 + 1 s.
  hooks().set_clock(kT0 + kSec - 1);
  d = send(x);
  EXPECT_EQ(d.reason, RL_REASON_LIMITED) << "a nanosecond before its token";
  EXPECT_EQ(d.memo, 2u);
  hooks().set_clock(kT0 + kSec);
  d = send(x);
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED) << "on the nanosecond its token is back";
  d = send(x);
  EXPECT_EQ(d.reason, RL_REASON_LIMITED);
  EXPECT_EQ(d.memo, 1u) << "the remembered word would admit it: the slot judges, and is kept";
  EXPECT_EQ(send(x).memo, 2u);
  EXPECT_EQ(counters("per-source").passed_pkts, 4u);
  EXPECT_EQ(counters("per-source").dropped_pkts, 9u);
}

// The memo keeps a word, not a verdict: a packet is judged on its own cost, and a smaller one
// that the word admits is judged in the key's slot.
TEST_F(MemoTest, ARefusalIsRepeatedOnlyForWhatTheWordRefuses) {
  ASSERT_TRUE(cpu_.pinned());
  auto r = token_bucket("bw", 0, 0);
  r.limit.rate = per_second(1000, policy::Unit::kBytes);
  r.limit.burst = 1000;
  one_rule(r);
  auto frame = [](size_t bytes) {
    return packet::Builder().ipv4("198.18.0.1", "192.0.2.1").udp(1, 53).payload(bytes - 42).build();
  };
  const auto big = frame(600), small = frame(300);
  ASSERT_EQ(big.size(), 600u);
  EXPECT_EQ(send(big).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(big).memo, 1u);
  auto d = send(big);
  EXPECT_EQ(d.reason, RL_REASON_LIMITED);
  EXPECT_EQ(d.memo, 2u) << "600 bytes more than the 400 left";
  d = send(small);
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED) << "300 bytes fit the 400 left";
  EXPECT_EQ(d.memo, 1u);
  EXPECT_EQ(send(small).reason, RL_REASON_LIMITED) << "100 left";
  EXPECT_EQ(send(small).memo, 2u);
}

// A block is kept as its word (read after the packet that starts it), good until the block
// ends; rld's reset of the key (rlctl unblock)
// ends what the memo holds at once, a block or a refusal.
TEST_F(MemoTest, AnUnblockedKeyPassesAtOnce) {
  ASSERT_TRUE(cpu_.pinned());
  policy::Policy p;
  auto r = token_bucket("blk", 1, 1);
  r.block_ns = 60 * kSec;
  auto plain = token_bucket("plain", 1, 1);
  plain.match.protocol = 6;
  p.rules = {plain, r};
  apply(p);
  rl_key k{};
  k.rule_id = ids_.by_name.at("blk").id;
  k.kind = RL_KEY_SRC_ADDR;
  k.family = 4;
  ASSERT_EQ(inet_pton(AF_INET, "198.18.0.1", k.addr), 1);
  const auto f = udp4("198.18.0.1");

  EXPECT_EQ(send(f).reason, RL_REASON_ADMITTED);
  auto d = send(f);
  EXPECT_EQ(d.reason, RL_REASON_LIMITED);
  EXPECT_EQ(d.memo, 1u) << "the packet that starts the block writes it to the slot";
  d = send(f);
  EXPECT_EQ(d.reason, RL_REASON_BLOCKED);
  EXPECT_EQ(d.memo, 2u);
  hooks().set_clock(kT0 + 60 * kSec - 1);
  d = send(f);
  EXPECT_EQ(d.reason, RL_REASON_BLOCKED) << "the last nanosecond of the block";
  EXPECT_EQ(d.memo, 2u);
  hooks().set_clock(kT0 + 60 * kSec);
  EXPECT_EQ(send(f).reason, RL_REASON_ADMITTED) << "the block is over: a fresh key";

  EXPECT_EQ(send(f).reason, RL_REASON_LIMITED);
  EXPECT_EQ(send(f).reason, RL_REASON_BLOCKED);
  ASSERT_EQ(send(f).memo, 2u);
  EXPECT_EQ(dp_->reset_key(k), 1u);
  EXPECT_EQ(send(f).reason, RL_REASON_ADMITTED) << "unblocked: the memo's block is not taken";

  const auto t = tcp4("198.18.0.1", 80, packet::kAck);
  EXPECT_EQ(send(t).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(t).reason, RL_REASON_LIMITED);
  ASSERT_EQ(send(t).memo, 2u);
  k.rule_id = ids_.by_name.at("plain").id;
  EXPECT_EQ(dp_->reset_key(k), 1u);
  EXPECT_EQ(send(t).reason, RL_REASON_ADMITTED) << "reset: the memo's refusal is not taken";
}

// Refusals whose word may shrink are not kept: the windows' (a new window starts a new count)
// and those of a rule with stacked limits (a later limit's refusal gives the first its token
// back, on any CPU).
TEST_F(MemoTest, RefusalsOfWindowsAndStackedLimitsAreJudgedEachTime) {
  ASSERT_TRUE(cpu_.pinned());
  policy::Policy p;
  auto stacked = token_bucket("stacked", 1, 1);
  stacked.match.protocol = 6;
  stacked.more = {stacked_bucket("total", 100, 100, policy::KeyKind::kRule)};
  p.rules = {stacked, window("fw", policy::Algorithm::kFixedWindow, 1, kSec)};
  apply(p);
  const auto u = udp4("198.18.0.1");
  const auto t = tcp4("198.18.0.1", 80, packet::kAck);
  EXPECT_EQ(passed(u, 1), 1);
  EXPECT_EQ(passed(t, 1), 1);
  for (int i = 0; i < 4; i++) {
    auto d = send(u);
    EXPECT_EQ(d.reason, RL_REASON_LIMITED) << i;
    EXPECT_NE(d.memo, 2u) << i << ": a window";
  }
  for (int i = 0; i < 4; i++) {
    auto d = send(t);
    EXPECT_EQ(d.reason, RL_REASON_LIMITED) << i;
    EXPECT_NE(d.memo, 2u) << i << ": stacked limits";
  }
}

// Once the budget is spent and the shared key refuses, every new source's packet is refused on
// the two words the memo kept (memo 3), reported as the shared key, until either word would
// admit: to the nanosecond, the budget's here (a token each half second, the shared key's packet
// each second) and the shared key's in the next test.
TEST_F(MemoTest, AnUnadmittedRefusalIsRepeatedForEveryNewSource) {
  ASSERT_TRUE(cpu_.pinned());
  one_rule(budgeted(1, 2));
  auto d = send(fresh(0));
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED);
  EXPECT_EQ(d.unadmitted, 0u) << "the budget's token";
  d = send(fresh(1));
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED);
  EXPECT_EQ(d.unadmitted, 1u) << "the shared key's packet";
  d = send(fresh(2));
  EXPECT_EQ(d.reason, RL_REASON_LIMITED);
  EXPECT_EQ(d.unadmitted, 1u);
  EXPECT_NE(d.memo, 3u) << "the first refusal is judged by both keys";
  const uint64_t shared = d.key_hash;
  for (int i = 3; i <= 50; i++) {
    d = send(screened_source());
    EXPECT_EQ(d.reason, RL_REASON_LIMITED) << i;
    EXPECT_EQ(d.memo, 3u) << i;
    EXPECT_EQ(d.unadmitted, 1u) << i;
    EXPECT_EQ(d.key_hash, shared) << i << ": reported as the shared key";
  }
  hooks().set_clock(kT0 + kSec / 2 - 1);
  d = send(screened_source());
  EXPECT_EQ(d.reason, RL_REASON_LIMITED) << "a nanosecond before the token";
  EXPECT_EQ(d.memo, 3u);
  hooks().set_clock(kT0 + kSec / 2);
  d = send(fresh(52));
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED);
  EXPECT_EQ(d.unadmitted, 0u) << "on the nanosecond the token is back";
  d = send(fresh(53));
  EXPECT_EQ(d.reason, RL_REASON_LIMITED);
  EXPECT_NE(d.memo, 3u);
  EXPECT_EQ(send(screened_source()).memo, 3u);
  EXPECT_EQ(global(RL_GC_NEW_UNADMITTED), 53u);
  EXPECT_EQ(counters("guarded").passed_pkts, 3u);
  EXPECT_EQ(counters("guarded").dropped_pkts, 52u);
  // A known source is judged by its own key throughout.
  d = send(fresh(0));
  EXPECT_EQ(d.unadmitted, 0u);
  EXPECT_EQ(d.reason, RL_REASON_LIMITED) << "its own key's token is a second away";
  EXPECT_NE(d.memo, 3u);
}

// The shared key's word gives way on the nanosecond its packet is back (every half second), while
// the budget's still refuses (a token a second).
TEST_F(MemoTest, AnUnadmittedRefusalEndsWithTheSharedKeys) {
  ASSERT_TRUE(cpu_.pinned());
  one_rule(budgeted(2, 1));
  EXPECT_EQ(send(fresh(0)).unadmitted, 0u);
  EXPECT_EQ(send(fresh(1)).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(fresh(2)).reason, RL_REASON_LIMITED);
  EXPECT_EQ(send(screened_source()).memo, 3u);
  hooks().set_clock(kT0 + kSec / 2 - 1);
  auto d = send(screened_source());
  EXPECT_EQ(d.reason, RL_REASON_LIMITED);
  EXPECT_EQ(d.memo, 3u);
  hooks().set_clock(kT0 + kSec / 2);
  d = send(fresh(5));
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED) << "the shared key's next packet";
  EXPECT_EQ(d.unadmitted, 1u);
  EXPECT_EQ(send(fresh(6)).reason, RL_REASON_LIMITED);
  EXPECT_EQ(send(screened_source()).memo, 3u);
}

// The shared key's block is kept as its word, from the packet after the one that starts it; a new
// rule set, even the same rules again, starts without what the memo kept.
TEST_F(MemoTest, AnUnadmittedBlockHoldsUntilTheRuleSetChanges) {
  ASSERT_TRUE(cpu_.pinned());
  policy::Policy p;
  auto r = budgeted(1, 1);
  r.block_ns = 60 * kSec;
  p.rules = {r};
  apply(p);
  EXPECT_EQ(send(fresh(0)).unadmitted, 0u);
  EXPECT_EQ(send(fresh(1)).reason, RL_REASON_ADMITTED);
  auto d = send(fresh(2));
  EXPECT_EQ(d.reason, RL_REASON_LIMITED);
  EXPECT_NE(d.memo, 3u) << "the packet that starts the block writes it to the shared key";
  d = send(screened_source());
  EXPECT_EQ(d.reason, RL_REASON_BLOCKED);
  EXPECT_EQ(d.memo, 3u);
  hooks().set_clock(kT0 + kSec / 2);
  d = send(screened_source());
  EXPECT_EQ(d.reason, RL_REASON_BLOCKED);
  EXPECT_EQ(d.memo, 3u);
  apply(p);
  d = send(fresh(5));
  EXPECT_EQ(d.reason, RL_REASON_BLOCKED);
  EXPECT_NE(d.memo, 3u) << "another rule set";
  EXPECT_EQ(send(screened_source()).memo, 3u);
}

// A budget per source prefix has a word per prefix: its refusals are judged each time.
TEST_F(MemoTest, PerPrefixBudgetsAreJudgedEachTime) {
  ASSERT_TRUE(cpu_.pinned());
  auto r = budgeted(1, 1);
  r.new_sources->key = policy::KeyKind::kSourcePrefix;
  r.new_sources->v4_prefix = 24;
  one_rule(r);
  int passed = 0;
  for (int i = 0; i < 20; i++) {
    auto d = send(fresh(i));
    passed += d.verdict == XDP_PASS;
    EXPECT_NE(d.memo, 3u) << i;
  }
  EXPECT_EQ(passed, 1 + 1) << "the /24's token and its shared key's packet";
  EXPECT_EQ(send(fresh(256)).reason, RL_REASON_ADMITTED) << "another /24, its own budget";
}

// The runtime lists change while packets run; they are asked before the memo on every packet.
TEST_F(MemoTest, RuntimeEntriesDecideOverTheMemo) {
  ASSERT_TRUE(cpu_.pinned());
  policy::Policy p;
  p.rules = {token_bucket("all", 1000, 1000)};
  apply(p);
  const auto x = udp4("198.18.0.1");
  EXPECT_EQ(send(x).reason, RL_REASON_ADMITTED);
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.0.1/32"), RL_SRC_F_DENY, 0).ok());
  EXPECT_EQ(send(x).reason, RL_REASON_RUNTIME_DENY);
  ASSERT_TRUE(dp_->runtime_acl_remove(P("198.18.0.1/32")).ok());
  EXPECT_EQ(send(x).reason, RL_REASON_ADMITTED);
}

}  // namespace
}  // namespace rl::testing
