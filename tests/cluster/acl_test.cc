// SPDX-License-Identifier: GPL-2.0-only
// An ACL user on a real redis-server, given exactly the permissions docs/cluster.md lists (the
// line is read from the document, so the two cannot drift apart): syncs, heartbeats and peers
// work for several nodes; a user missing one permission is refused with Redis' NOPERM naming it.
#include "redis_test.h"

namespace rl::testing {
namespace {

constexpr char kUser[] = "rld";
constexpr char kPassword[] = "acl-test-pass";

class AclTest : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    auto acl = documented_acl(kPassword);
    ASSERT_FALSE(acl.empty()) << "docs/cluster.md has no ACL SETUSER line";
    auto r = server_->command(acl);
    ASSERT_TRUE(r && !r->is_error()) << (r ? r->str : r.error().str());
  }
  cluster::RedisOptions as_user() const {
    auto o = options();
    o.user = kUser;
    o.password = kPassword;
    return o;
  }
  // The user loses one permission.
  void revoke(const std::string& what) {
    auto r = server_->command({"ACL", "SETUSER", kUser, "-" + what});
    ASSERT_TRUE(r && !r->is_error()) << (r ? r->str : r.error().str());
  }
};

TEST_F(AclTest, TheDocumentedPermissionsAreEnough) {
  std::vector<std::unique_ptr<cluster::RedisStore>> nodes;
  for (int i = 0; i < 3; i++) {
    nodes.push_back(store(as_user()));
    ASSERT_TRUE(nodes.back());
  }
  for (int i = 0; i < 3; i++) {
    auto reply = nodes[i]->sync({key_delta("api", "198.18.0.7", 40, 100, 60'000)});
    ASSERT_TRUE(reply) << reply.error().str();
    EXPECT_TRUE(reply->rejected.empty()) << reply->rejected_reason;
    ASSERT_TRUE(nodes[i]->heartbeat("node-" + std::to_string(i)));
  }
  auto s = stored("api", "198.18.0.7", 60'000);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cur + s->prev, 120u) << "every node's delta counted";
  auto peers = nodes[0]->peers(std::chrono::seconds(10));
  ASSERT_TRUE(peers) << peers.error().str();
  EXPECT_EQ(peers->size(), 3u);

  // After SCRIPT FLUSH the store resends its scripts with EVAL: also permitted.
  ASSERT_TRUE(server_->command({"SCRIPT", "FLUSH"}));
  auto again = nodes[0]->sync({key_delta("api", "198.18.0.7", 1, 100, 60'000)});
  ASSERT_TRUE(again) << again.error().str();
  EXPECT_GE(nodes[0]->stats().script_reloads, 1u);
}

TEST_F(AclTest, AMissingCommandInTheScriptIsNamed) {
  revoke("zadd");
  auto node = store(as_user());
  ASSERT_TRUE(node) << "the handshake needs no zadd";
  auto hb = node->heartbeat("node-a");
  ASSERT_FALSE(hb);
  EXPECT_EQ(hb.error().kind, cluster::ErrorKind::kPermission) << hb.error().str();
  EXPECT_NE(hb.error().message.find("NOPERM"), std::string::npos) << hb.error().str();
  EXPECT_NE(hb.error().message.find("zadd"), std::string::npos) << hb.error().str();

  revoke("hset");
  auto sync = node->sync({key_delta("api", "k", 1, 100, 60'000)});
  ASSERT_FALSE(sync) << "a sync the ACL refuses fails whole; its deltas stay pending";
  EXPECT_EQ(sync.error().kind, cluster::ErrorKind::kPermission) << sync.error().str();
  EXPECT_NE(sync.error().message.find("hset"), std::string::npos) << sync.error().str();
}

TEST_F(AclTest, AMissingCommandInTheHandshakeIsNamed) {
  revoke("script|load");
  auto refused = cluster::RedisStore::connect(as_user());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, cluster::ErrorKind::kPermission) << refused.error().str();
  EXPECT_NE(refused.error().message.find("NOPERM"), std::string::npos) << refused.error().str();
  EXPECT_NE(refused.error().message.find("SCRIPT LOAD"), std::string::npos)
      << refused.error().str();
}

TEST_F(AclTest, AWrongUserOrPasswordIsAnAuthError) {
  auto o = as_user();
  o.password = "wrong";
  auto refused = cluster::RedisStore::connect(o);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, cluster::ErrorKind::kAuth) << refused.error().str();
  EXPECT_NE(refused.error().message.find("AUTH rld"), std::string::npos) << refused.error().str();
  EXPECT_EQ(refused.error().message.find("wrong"), std::string::npos) << "leaks the password";

  o = as_user();
  o.password.clear();
  auto no_password = cluster::RedisStore::create(o);
  ASSERT_FALSE(no_password);
  EXPECT_EQ(no_password.error().kind, cluster::ErrorKind::kInvalid);
}

}  // namespace
}  // namespace rl::testing
