// The per-CPU memo of the last match (bpf/lib/memo.h): a packet with its CPU's previous packet's
// headers takes that packet's outcome only under the same rule set, and a packet that differs in
// any field a rule can match on is matched again. Each test keeps its thread on one CPU, so that
// every packet meets the memo the one before it left.
#include <sched.h>

#include "fixture.h"

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
  dp_->set_clock(kT0 + kSec);
  EXPECT_EQ(passed(x, 3), 1) << "one second: one more packet";
  EXPECT_EQ(passed(y, 3), 1);
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
