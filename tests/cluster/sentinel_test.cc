// SPDX-License-Identifier: GPL-2.0-only
// Redis as fleets run it for failover: a master, a replica and three sentinels, all real
// redis-server processes on loopback. The store finds the master through the sentinels and
// follows a failover, by a killed master or by SENTINEL FAILOVER, without being recreated.
#include <chrono>
#include <cstdio>
#include <thread>

#include "cluster/pending.h"
#include "redis_cluster.h"
#include "redis_test.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kWindowMs = 3'600'000;

class SentinelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(RedisServer::binary().empty()) << "redis-server is required";
    auto master = RedisServer::start();
    ASSERT_TRUE(master) << master.error().str();
    master_ = std::move(*master);
    auto replica = RedisServer::start({.replica_of = master_->port()});
    ASSERT_TRUE(replica) << replica.error().str();
    replica_ = std::move(*replica);
    for (int i = 0; i < 3; i++) {
      auto s = RedisServer::start({.sentinel_for = master_->port()});
      ASSERT_TRUE(s) << s.error().str();
      sentinels_.push_back(std::move(*s));
    }
    std::string waiting;
    ASSERT_TRUE(wait_for(20s, [&] { return sentinels_ready(*replica_, sentinels_, &waiting); }))
        << "the sentinels never met; " << waiting;
  }

  template <typename Done>
  static bool wait_for(std::chrono::seconds limit, Done done) {
    for (auto end = Clock::now() + limit; Clock::now() < end; std::this_thread::sleep_for(100ms))
      if (done()) return true;
    return false;
  }

  cluster::RedisOptions options() const {
    cluster::RedisOptions o;
    for (const auto& s : sentinels_) o.sentinel.sentinels.push_back({"127.0.0.1", s->port(), ""});
    o.sentinel.master_name = kSentinelMaster;
    o.command_timeout = 500ms;
    return o;
  }

  // The count a server holds for a key. A promotion makes the sentinels close the new master's
  // client connections (ours too): a failed command is tried once more, on a new connection.
  static uint64_t counted(RedisServer& s, const std::string& key) {
    const std::vector<std::string> hget = {"HGET", cluster::rule_hash("rl", "api", kWindowMs), key};
    auto r = s.command(hget);
    if (!r) r = s.command(hget);
    if (!r || r->type == RedisValue::Type::kNil) return 0;
    auto w = unpack_counts(r->str);
    return w ? w->cur + w->prev : 0;
  }

  // Syncs one delta per call of `step` for `limit`, keeping failed deltas pending as rld does,
  // until `done` or the limit; returns the deltas sent in all.
  template <typename Done>
  uint64_t sync_until(cluster::RedisStore& store, cluster::PendingDeltas& pending, Done done,
                      std::chrono::seconds limit) {
    uint64_t sent = 0;
    for (auto end = Clock::now() + limit; Clock::now() < end && !done();
         std::this_thread::sleep_for(100ms)) {
      pending.add(key_delta("api", "198.18.0.7", 1, 1'000'000, kWindowMs));
      sent++;
      auto batch = pending.take();
      if (!store.sync(batch)) pending.add(batch);
    }
    return sent;
  }

  std::unique_ptr<RedisServer> master_, replica_;
  std::vector<std::unique_ptr<RedisServer>> sentinels_;
};

TEST_F(SentinelTest, FindsTheMasterThroughTheSentinels) {
  auto store = cluster::RedisStore::connect(options());
  ASSERT_TRUE(store) << store.error().str();
  EXPECT_EQ((*store)->endpoint().port, master_->port());
  ASSERT_TRUE((*store)->sync({key_delta("api", "198.18.0.7", 5, 100, kWindowMs)}));
  EXPECT_EQ(counted(*master_, "198.18.0.7"), 5u);
  ASSERT_TRUE((*store)->heartbeat("node-a"));

  // A dead sentinel is passed over.
  sentinels_[0]->kill();
  auto again = cluster::RedisStore::connect(options());
  ASSERT_TRUE(again) << again.error().str();
  EXPECT_EQ((*again)->endpoint().port, master_->port());
}

// The master dies mid-flow: calls fail until the sentinels promote the replica, then the same
// store syncs to it. Lost at most: what the replica had not received, and the deltas of the
// sync in flight when the master died (none here: a failed sync's deltas stay pending).
TEST_F(SentinelTest, FollowsAFailoverWhenTheMasterDies) {
  auto store = cluster::RedisStore::connect(options());
  ASSERT_TRUE(store) << store.error().str();
  cluster::PendingDeltas pending;
  uint64_t before = sync_until(
      **store, pending, [] { return false; }, 1s);
  ASSERT_TRUE(wait_for(5s, [&] { return counted(*replica_, "198.18.0.7") == before; }))
      << "the replica has every count before the master dies";
  master_->kill();
  const uint16_t promoted = replica_->port();
  uint64_t after = sync_until(
      **store, pending,
      [&] { return (*store)->connected() && (*store)->endpoint().port == promoted; }, 30s);
  ASSERT_EQ((*store)->endpoint().port, promoted) << "no failover within 30 s";
  EXPECT_GE((*store)->stats().masters_changed, 1u);
  // One more sync carries whatever was pending when the store reached the new master.
  auto last = pending.take();
  ASSERT_TRUE((*store)->sync(last));
  EXPECT_EQ(counted(*replica_, "198.18.0.7"), before + after)
      << "every delta, before and after the failover";
}

// SENTINEL FAILOVER demotes a live master, which accepts writes until the sentinels reconfigure
// it; they are lost with its resync. The store asks a sentinel every second whether the master
// moved, so it loses at most what it sent between the promotion and the next check after the
// sentinels confirmed it: about two seconds, 20 deltas at this test's 10 a second.
TEST_F(SentinelTest, FollowsASentinelFailover) {
  auto store = cluster::RedisStore::connect(options());
  ASSERT_TRUE(store) << store.error().str();
  cluster::PendingDeltas pending;
  uint64_t before = sync_until(
      **store, pending, [] { return false; }, 1s);
  auto f = sentinels_[1]->command({"SENTINEL", "FAILOVER", kSentinelMaster});
  ASSERT_TRUE(f && !f->is_error()) << (f ? f->str : f.error().str());
  const uint16_t promoted = replica_->port();
  uint64_t after = sync_until(
      **store, pending,
      [&] { return (*store)->connected() && (*store)->endpoint().port == promoted; }, 30s);
  ASSERT_EQ((*store)->endpoint().port, promoted) << "the store never reached the new master";
  auto last = pending.take();
  ASSERT_TRUE((*store)->sync(last));
  const uint64_t got = counted(*replica_, "198.18.0.7");
  std::printf("SENTINEL FAILOVER: %lu deltas sent, %lu counted on the new master\n",
              static_cast<unsigned long>(before + after), static_cast<unsigned long>(got));
  EXPECT_LE(got, before + after) << "nothing counted twice here: no reply was lost";
  EXPECT_GE(got + 20, before + after) << "lost more than two seconds of deltas";
  EXPECT_GE((*store)->stats().masters_changed, 1u);
}

// rld's ACL user with the documented permissions, the base line and Sentinel's, read from
// docs/cluster.md, on the master and its replica (ACL users are per server).
TEST_F(SentinelTest, AnAclUserWithTheDocumentedPermissions) {
  const std::string password = "acl-sentinel-pass";
  Status granted = grant_documented_acl({master_.get(), replica_.get()}, password, "+role");
  ASSERT_TRUE(granted) << granted.error().str();
  auto o = options();
  o.user = "rld";
  o.password = password;
  auto store = cluster::RedisStore::connect(o);
  ASSERT_TRUE(store) << store.error().str();
  ASSERT_TRUE((*store)->sync({key_delta("api", "198.18.0.7", 5, 100, kWindowMs)}));
  EXPECT_EQ(counted(*master_, "198.18.0.7"), 5u);

  auto r = master_->command({"ACL", "SETUSER", "rld", "-role"});
  ASSERT_TRUE(r && !r->is_error());
  auto refused = cluster::RedisStore::connect(o);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, cluster::ErrorKind::kPermission) << refused.error().str();
  EXPECT_NE(refused.error().message.find("role"), std::string::npos) << refused.error().str();
}

// The log names what was tried, the sentinels, and not the server that would have been asked
// next (no master is known yet).
TEST_F(SentinelTest, NoSentinelAnsweringIsAnError) {
  auto o = options();
  for (auto& s : sentinels_) s->kill();
  ::testing::internal::CaptureStderr();
  auto refused = cluster::RedisStore::connect(o);
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("no sentinel gave the master of 'rl-master'"),
            std::string::npos)
      << refused.error().str();
  EXPECT_NE(log.find("endpoint=\"sentinels 127.0.0.1:" + std::to_string(sentinels_[0]->port())),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find(":6379"), std::string::npos) << log;
  o.sentinel.master_name = "";
  EXPECT_EQ(cluster::RedisStore::create(o).error().kind, cluster::ErrorKind::kInvalid);
}

TEST(SentinelAddress, HostAndPort) {
  auto v4 = cluster::parse_endpoint("10.0.0.5:26379");
  ASSERT_TRUE(v4) << v4.error().str();
  EXPECT_EQ(v4->host, "10.0.0.5");
  EXPECT_EQ(v4->port, 26379);
  auto v6 = cluster::parse_endpoint("[2001:db8::5]:26379");
  ASSERT_TRUE(v6) << v6.error().str();
  EXPECT_EQ(v6->host, "2001:db8::5");
  EXPECT_FALSE(cluster::parse_endpoint("10.0.0.5"));
  EXPECT_FALSE(cluster::parse_endpoint("10.0.0.5:0"));
  EXPECT_FALSE(cluster::parse_endpoint("[2001:db8::5:26379"));
}

}  // namespace
}  // namespace rl::testing
