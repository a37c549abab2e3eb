// SPDX-License-Identifier: GPL-2.0-only
// Connection limits on the real verifier: a SYN meets its key's count of open connections, which
// rld writes; an admitted SYN leaves its tuple for rld to find when the handshake completes.
#include <arpa/inet.h>

#include "fixture.h"

namespace rl::testing {
namespace {

using packet::kAck;
using packet::kSyn;

class ConnectionsTest : public BpfTest {
 protected:
  static std::vector<uint8_t> syn4(const std::string& src, uint16_t sport, uint16_t dport = 22) {
    return packet::Builder().ipv4(src, "192.0.2.1").tcp(sport, dport, kSyn).build();
  }
  static rl_conn_tuple tuple4(const std::string& src, uint16_t sport, uint16_t dport = 22) {
    rl_conn_tuple t{};
    t.family = 4;
    inet_pton(AF_INET, src.c_str(), &t.saddr[0]);
    inet_pton(AF_INET, "192.0.2.1", &t.daddr[0]);
    t.sport = sport;
    t.dport = dport;
    return t;
  }
  // The key hash the admitted SYN of `t` was judged by.
  uint64_t admitted_hash(const rl_conn_tuple& t) {
    auto syn = dp_->take_admitted_syn(t);
    EXPECT_TRUE(syn.ok() && syn->has_value()) << "no admitted SYN for the tuple";
    return syn.ok() && *syn ? (*syn)->hash : 0;
  }
  void set_open(uint64_t hash, uint32_t n) { ASSERT_TRUE(dp_->set_open_connections(hash, n).ok()); }
};

TEST_F(ConnectionsTest, ASynIsRefusedWhileItsKeyHoldsTheLimit) {
  one_rule(connections("ssh", 2));
  ASSERT_EQ(compiled_.rules[0].algo, RL_ALGO_CONNECTIONS);
  EXPECT_EQ(send(syn4("198.18.0.1", 40001)).verdict, XDP_PASS) << "no connection open yet";
  uint64_t h = admitted_hash(tuple4("198.18.0.1", 40001));
  ASSERT_NE(h, 0u);
  auto again = dp_->take_admitted_syn(tuple4("198.18.0.1", 40001));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value()) << "taken once";

  set_open(h, 1);
  EXPECT_EQ(send(syn4("198.18.0.1", 40002)).verdict, XDP_PASS) << "1 of 2 open";
  EXPECT_EQ(admitted_hash(tuple4("198.18.0.1", 40002)), h) << "the same source, the same key";
  set_open(h, 2);
  rl_decision d = send(syn4("198.18.0.1", 40003));
  EXPECT_EQ(d.verdict, XDP_DROP) << "2 of 2 open: the new connection is refused";
  EXPECT_EQ(d.reason, RL_REASON_LIMITED);
  auto none = dp_->take_admitted_syn(tuple4("198.18.0.1", 40003));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value()) << "a refused SYN leaves nothing for rld";
  EXPECT_EQ(counters("ssh").dropped_pkts, 1u);

  // The open connections' own packets are not the rule's: only SYNs are judged.
  auto ack = packet::Builder().ipv4("198.18.0.1", "192.0.2.1").tcp(40001, 22, kAck).build();
  EXPECT_EQ(passed(ack, 5), 5);
  EXPECT_EQ(send(ack).rule_pos, -1);

  EXPECT_EQ(send(syn4("198.18.0.2", 40001)).verdict, XDP_PASS) << "another source, its own count";
  set_open(h, 1);
  EXPECT_EQ(send(syn4("198.18.0.1", 40004)).verdict, XDP_PASS) << "a connection closed";
  set_open(h, 0);
  EXPECT_TRUE(dp_->open_connections(h).ok());
  EXPECT_EQ(*dp_->open_connections(h), 0u);
}

TEST_F(ConnectionsTest, AnIpv6ClientsConnectionsCountAgainstItsPrefix) {
  one_rule(connections("ssh", 1));
  auto syn6 = [](const std::string& src, uint16_t sport) {
    return packet::Builder().ipv6(src, "2001:db8::1").tcp(sport, 22, kSyn).build();
  };
  EXPECT_EQ(send(syn6("2001:db8:0:5::1", 40001)).verdict, XDP_PASS);
  rl_conn_tuple t{};
  t.family = 6;
  inet_pton(AF_INET6, "2001:db8:0:5::1", t.saddr);
  inet_pton(AF_INET6, "2001:db8::1", t.daddr);
  t.sport = 40001;
  t.dport = 22;
  set_open(admitted_hash(t), 1);
  EXPECT_EQ(send(syn6("2001:db8:0:5::2", 40001)).verdict, XDP_DROP) << "the same /64";
  EXPECT_EQ(send(syn6("2001:db8:0:6::1", 40001)).verdict, XDP_PASS) << "another /64";
}

// Stacked, in either place: the connection limit refuses on its own count, and a rate limit
// beside it still holds.
TEST_F(ConnectionsTest, AConnectionLimitStacksWithARate) {
  for (bool connections_first : {true, false}) {
    policy::Rule r = connections("ssh", 1);
    policy::StackedLimit rate = stacked_bucket("rate", 1, 2, policy::KeyKind::kRule);
    if (connections_first) {
      r.limit_name = "open";
      r.more = {rate};
    } else {
      policy::StackedLimit open;
      open.name = "open";
      open.limit = r.limit;
      r.limit = rate.limit;
      r.key = policy::KeyKind::kRule;
      r.limit_name = "rate";
      r.more = {open};
    }
    one_rule(r);
    std::string src = connections_first ? "198.18.1.1" : "198.18.1.2";
    EXPECT_EQ(send(syn4(src, 40001)).verdict, XDP_PASS);
    set_open(admitted_hash(tuple4(src, 40001)), 1);
    rl_decision d = send(syn4(src, 40002));
    EXPECT_EQ(d.verdict, XDP_DROP) << "one connection open";
    EXPECT_EQ(d.limit, connections_first ? 0u : 1u);
    EXPECT_EQ(send(syn4("198.18.2.1", 40001)).verdict, XDP_PASS) << "the rate's second token";
    EXPECT_EQ(send(syn4("198.18.2.2", 40001)).verdict, XDP_DROP) << "the rate's burst is spent";
  }
}

}  // namespace
}  // namespace rl::testing
