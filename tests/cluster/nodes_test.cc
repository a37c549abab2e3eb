// SPDX-License-Identifier: GPL-2.0-only
// Heartbeats and the list of peers, both on the server's clock.
#include <algorithm>

#include "redis_test.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;

class NodesTest : public RedisTest {};

TEST_F(NodesTest, HeartbeatsMakePeers) {
  auto a = store(), b = store();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->heartbeat("edge-1"));
  ASSERT_TRUE(b->heartbeat("edge-2"));
  auto now = server_->time_ms();
  ASSERT_TRUE(now);
  auto peers = a->peers(10s);
  ASSERT_TRUE(peers) << peers.error().str();
  ASSERT_EQ(peers->size(), 2u);
  std::vector<std::string> names;
  for (const auto& p : *peers) {
    names.push_back(p.node);
    EXPECT_LE(p.last_seen_ms, *now);
    EXPECT_GT(p.last_seen_ms + 5000, *now);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"edge-1", "edge-2"}));
}

TEST_F(NodesTest, OnlyRecentNodesArePeersAndOldOnesAreTrimmed) {
  auto store = this->store();
  ASSERT_TRUE(store);
  auto now = server_->time_ms();
  ASSERT_TRUE(now);
  // Seen a minute ago, and two hours ago.
  ASSERT_TRUE(server_->command({"ZADD", "rl:nodes", std::to_string(*now - 60'000), "quiet"}));
  ASSERT_TRUE(server_->command({"ZADD", "rl:nodes", std::to_string(*now - 7'200'000), "gone"}));
  ASSERT_TRUE(store->heartbeat("edge-1"));
  auto recent = store->peers(30s);
  ASSERT_TRUE(recent);
  ASSERT_EQ(recent->size(), 1u);
  EXPECT_EQ((*recent)[0].node, "edge-1");
  auto hour = store->peers(1h);
  ASSERT_TRUE(hour);
  EXPECT_EQ(hour->size(), 2u);
  auto gone = server_->command({"ZSCORE", "rl:nodes", "gone"});
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->type, RedisValue::Type::kNil) << "an entry older than an hour survived";
  // The set itself expires if the whole fleet goes quiet for an hour.
  auto ttl = server_->command({"PTTL", "rl:nodes"});
  ASSERT_TRUE(ttl);
  EXPECT_GT(ttl->integer, 3'500'000);
}

}  // namespace
}  // namespace rl::testing
