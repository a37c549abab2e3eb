// SPDX-License-Identifier: GPL-2.0-only
// Connection counts from conntrack's events: each connection counts once, from its handshake's
// end to its close, against the key its SYN was admitted under; others are not counted.
#include "daemon/connections/connection_counter.h"

#include <gtest/gtest.h>

#include "datapath/fake/fake_connections.h"

namespace rl::daemon {
namespace {

rl_conn_tuple tuple(uint32_t src, uint16_t sport) {
  rl_conn_tuple t{};
  t.family = 4;
  t.saddr[0] = src;
  t.daddr[0] = 0x0100000a;
  t.sport = sport;
  t.dport = 22;
  return t;
}

ConnEvent event(const rl_conn_tuple& t, bool open) {
  ConnEvent e;
  e.tuple = t;
  e.open = open;
  return e;
}

// Three connections of source 1 whose SYNs were admitted under key hash 7, and one of source 2
// whose SYN no limit admitted.
class ConnectionCounterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& t : {a, b, d}) dp.admit(t, {7, 1, 0});
  }
  testing::FakeConnections dp;
  ConnectionCounter c{dp};
  rl_conn_tuple a = tuple(1, 40001), b = tuple(1, 40002), d = tuple(1, 40003);
  rl_conn_tuple other = tuple(2, 40001);
};

TEST_F(ConnectionCounterTest, CountsEachAdmittedConnectionFromItsHandshakeToItsClose) {
  ASSERT_TRUE(c.on_event(event(a, true)).ok());
  ASSERT_TRUE(c.on_event(event(a, true)).ok()) << "FIN_WAIT after ESTABLISHED: still one";
  EXPECT_EQ(dp.open.at(7), 1u);
  ASSERT_TRUE(c.on_event(event(b, true)).ok());
  EXPECT_EQ(dp.open.at(7), 2u);
  ASSERT_TRUE(c.on_event(event(other, true)).ok());
  EXPECT_EQ(c.tracked(), 2u) << "no limit admitted its SYN: not counted";

  ASSERT_TRUE(c.on_event(event(a, false)).ok());
  ASSERT_TRUE(c.on_event(event(a, false)).ok()) << "TIME_WAIT, then destroyed: one close";
  EXPECT_EQ(dp.open.at(7), 1u);
  ASSERT_TRUE(c.on_event(event(other, false)).ok());
  ASSERT_TRUE(c.on_event(event(b, false)).ok());
  EXPECT_EQ(dp.open.count(7), 0u) << "a key with none open leaves the map";
  EXPECT_EQ(c.tracked(), 0u);

  // The tuple again, a new connection: counted again once its SYN was admitted again.
  ASSERT_TRUE(c.on_event(event(a, true)).ok());
  EXPECT_EQ(dp.open.count(7), 0u) << "no SYN admitted for this one";
  dp.admit(a, {7, 1, 0});
  ASSERT_TRUE(c.on_event(event(a, true)).ok());
  EXPECT_EQ(dp.open.at(7), 1u);
  ASSERT_TRUE(c.clear().ok());
  EXPECT_TRUE(dp.open.empty());
}

// A restarted rld adopts the counts of connections it cannot follow: counting starts from none.
TEST_F(ConnectionCounterTest, StartsFromNoCountsWhateverTheDataPathHeld) {
  dp.open[9] = 4;  // left by the rld before, for connections no event will close
  ASSERT_TRUE(c.clear().ok());
  EXPECT_TRUE(dp.open.empty());
  ASSERT_TRUE(c.on_event(event(a, true)).ok());
  EXPECT_EQ(dp.open.at(7), 1u);
}

// After lost events, conntrack's table decides: a counted connection it no longer holds is
// closed, an open one whose establishment was lost is counted.
TEST_F(ConnectionCounterTest, ReconcilesWithWhatConntrackHoldsAfterLostEvents) {
  ASSERT_TRUE(c.on_event(event(a, true)).ok());
  ASSERT_TRUE(c.on_event(event(b, true)).ok());
  // Lost: a's close and d's establishment.
  ASSERT_TRUE(c.reconcile({b, d}).ok());
  EXPECT_EQ(dp.open.at(7), 2u);
  EXPECT_EQ(c.tracked(), 2u);
  ASSERT_TRUE(c.on_event(event(a, false)).ok()) << "a's late close changes nothing";
  EXPECT_EQ(dp.open.at(7), 2u);
}

}  // namespace
}  // namespace rl::daemon
