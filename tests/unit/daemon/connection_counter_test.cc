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

TEST(ConnectionCounter, CountsEachAdmittedConnectionFromItsHandshakeToItsClose) {
  testing::FakeConnections dp;
  ConnectionCounter c(dp);
  auto a = tuple(1, 40001), b = tuple(1, 40002), other = tuple(2, 40001);
  dp.admit(a, {7, 1, 0});
  dp.admit(b, {7, 1, 0});

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

}  // namespace
}  // namespace rl::daemon
