// SPDX-License-Identifier: GPL-2.0-only
// Redis going away, hanging, or refusing us: calls fail fast with errors that say why, the
// store reconnects no faster than its backoff, and pending deltas arrive once it is back.
#include <chrono>
#include <thread>

#include "cluster/pending.h"
#include "redis_test.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cluster::KeyDelta;
using cluster::PendingDeltas;

class FailureTest : public RedisTest {
 protected:
  // One interval of the daemon's loop: this interval's deltas join the pending ones and all
  // go out in one sync; on failure they stay pending. Returns whether the sync succeeded.
  bool interval(cluster::RedisStore& store, PendingDeltas& pending, const KeyDelta& d,
                Clock::duration* took = nullptr) {
    pending.add(d);
    auto batch = pending.take();
    auto start = Clock::now();
    auto reply = store.sync(batch);
    if (took) *took = Clock::now() - start;
    if (!reply) {
      pending.add(batch);
      return false;
    }
    EXPECT_TRUE(reply->rejected.empty()) << reply->rejected_reason;
    return true;
  }

  uint64_t counted(const std::string& rule, const std::string& key) {
    auto s = stored(rule, key, 3'600'000);
    return s ? s->cur + s->prev : 0;
  }
};

TEST_F(FailureTest, KilledRedisFailsFastBacksOffAndGetsThePendingDeltas) {
  auto store = this->store();
  ASSERT_TRUE(store);
  PendingDeltas pending;
  const auto d = key_delta("api", "198.18.0.9", 10, 1'000'000, 3'600'000);
  ASSERT_TRUE(interval(*store, pending, d));
  EXPECT_TRUE(store->connected());

  server_->kill();
  Clock::duration took{};
  EXPECT_FALSE(interval(*store, pending, d, &took));
  EXPECT_LT(took, 400ms + 100ms);  // connect_timeout + command_timeout, and some slack
  EXPECT_FALSE(store->connected());
  uint64_t unsent = 10;

  // A busy loop for 1.5 s: the backoff (100 ms doubling, jittered to [1/2, 1]) allows at
  // most 5 attempts in that time, however many calls are made.
  uint64_t attempts_before = store->stats().connect_attempts;
  int calls = 0;
  Clock::duration slowest{};
  for (auto stop = Clock::now() + 1500ms; Clock::now() < stop && calls < 2000; calls++) {
    EXPECT_FALSE(interval(*store, pending, d, &took));
    slowest = std::max(slowest, took);
    unsent += 10;
    std::this_thread::sleep_for(2ms);
  }
  uint64_t attempts = store->stats().connect_attempts - attempts_before;
  EXPECT_GE(attempts, 2u);
  EXPECT_LE(attempts, 5u) << "over " << calls << " calls";
  EXPECT_LT(slowest, 500ms);
  EXPECT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending.dropped(), 0u);

  ASSERT_TRUE(server_->restart());
  // The next attempt comes when the backoff allows, at most 1.6 s away by now (5 s cap).
  bool back = false;
  for (auto stop = Clock::now() + 8s; !back && Clock::now() < stop;) {
    back = interval(*store, pending, d);
    unsent += 10;
    if (!back) std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(back) << "no successful sync within 8 s of the restart";
  EXPECT_TRUE(store->connected());
  EXPECT_TRUE(pending.empty());
  // The restarted server started empty: it holds exactly what was pending plus the last one.
  EXPECT_EQ(counted("api", "198.18.0.9"), unsent);
}

TEST_F(FailureTest, HungRedisTimesOutWithinTheCommandTimeout) {
  auto o = options();
  o.command_timeout = 200ms;
  auto store = this->store(o);
  ASSERT_TRUE(store);
  PendingDeltas pending;
  const auto d = key_delta("api", "k", 5, 1'000'000, 3'600'000);
  ASSERT_TRUE(interval(*store, pending, d));

  server_->pause();
  auto start = Clock::now();
  auto reply = store->sync({d});
  auto took = Clock::now() - start;
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().err, ETIMEDOUT) << reply.error().str();
  EXPECT_EQ(reply.error().kind, cluster::ErrorKind::kTimeout);
  EXPECT_NE(reply.error().message.find("sync"), std::string::npos) << reply.error().str();
  EXPECT_GE(took, 190ms);
  EXPECT_LT(took, 200ms + 100ms);
  EXPECT_FALSE(store->connected());
  pending.add(d);

  // Still hung: the reconnect after the backoff succeeds (the kernel accepts), the command
  // times out again, and no call ever waits longer than the two timeouts.
  std::this_thread::sleep_for(store->backoff_remaining() + 10ms);
  start = Clock::now();
  EXPECT_FALSE(store->sync({d}));
  EXPECT_LT(Clock::now() - start, 400ms + 100ms);
  pending.add(d);

  server_->resume();
  bool back = false;
  for (auto stop = Clock::now() + 5s; !back && Clock::now() < stop;) {
    auto batch = pending.take();
    back = static_cast<bool>(store->sync(batch));
    if (!back) {
      pending.add(batch);
      std::this_thread::sleep_for(20ms);
    }
  }
  ASSERT_TRUE(back);
  // A timed-out sync may still run once Redis wakes up: replaying it then counts it twice
  // (docs/cluster.md, "Failures"). Never less than once.
  uint64_t n = counted("api", "k");
  EXPECT_GE(n, 5u + 10u);
  EXPECT_LE(n, 5u + 10u + 10u);
}

TEST_F(FailureTest, ConnectErrorsAreValuesWithContext) {
  auto o = options();
  server_->kill();
  auto start = Clock::now();
  auto store = cluster::RedisStore::connect(o);
  ASSERT_FALSE(store);
  EXPECT_LT(Clock::now() - start, 300ms);
  EXPECT_EQ(store.error().err, ECONNREFUSED) << store.error().str();
  EXPECT_EQ(store.error().kind, cluster::ErrorKind::kUnreachable);
  EXPECT_NE(store.error().message.find("127.0.0.1:" + std::to_string(o.port)), std::string::npos)
      << store.error().str();

  // Lazily created, the first call reports the same.
  auto lazy = cluster::RedisStore::create(o);
  ASSERT_TRUE(lazy);
  auto reply = (*lazy)->sync({key_delta("r", "k", 1, 1, 1000)});
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().err, ECONNREFUSED);
  EXPECT_EQ(reply.error().kind, cluster::ErrorKind::kUnreachable);
  EXPECT_FALSE((*lazy)->connected());
  // And while backing off, says so without trying.
  auto again = (*lazy)->heartbeat("node-1");
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("next attempt in"), std::string::npos)
      << again.error().str();
  EXPECT_EQ(again.error().kind, cluster::ErrorKind::kUnreachable) << "the last failure's kind";
  EXPECT_EQ((*lazy)->stats().connect_attempts, 1u);
}

TEST(RedisOptionsTest, InvalidOptionsAreRefused) {
  cluster::RedisOptions o;
  o.key_prefix = "rl{x}";
  auto refused = cluster::RedisStore::create(o);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, cluster::ErrorKind::kInvalid);
  o = {};
  o.port = 0;
  EXPECT_FALSE(cluster::RedisStore::create(o));
  o = {};
  o.command_timeout = 0ms;
  EXPECT_FALSE(cluster::RedisStore::create(o));
  o = {};
  o.db = -1;
  EXPECT_FALSE(cluster::RedisStore::create(o));
  EXPECT_TRUE(cluster::RedisStore::create({}));
}

class PasswordTest : public RedisTest {
 protected:
  RedisServerOptions server_options() const override { return {"s3cret-pass", false}; }
};

TEST_F(PasswordTest, PasswordAndDbAreUsed) {
  auto o = options();
  o.password = "wrong";
  auto refused = cluster::RedisStore::connect(o);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("AUTH"), std::string::npos) << refused.error().str();
  EXPECT_EQ(refused.error().message.find("wrong"), std::string::npos) << "leaks the password";
  EXPECT_EQ(refused.error().kind, cluster::ErrorKind::kAuth);

  o = options();
  o.password = "";
  auto anonymous = cluster::RedisStore::connect(o);
  ASSERT_FALSE(anonymous);
  EXPECT_NE(anonymous.error().message.find("NOAUTH"), std::string::npos) << anonymous.error().str();
  EXPECT_EQ(anonymous.error().kind, cluster::ErrorKind::kAuth);

  o = options();
  o.db = 3;
  auto store = this->store(o);
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->sync({key_delta("api", "k", 7, 100, 60'000)}));
  ASSERT_TRUE(store->heartbeat("node-a"));
  EXPECT_FALSE(stored("api", "k", 60'000)) << "written to db 0";
  ASSERT_TRUE(server_->command({"SELECT", "3"}));
  auto in3 = stored("api", "k", 60'000);
  ASSERT_TRUE(in3);
  EXPECT_EQ(in3->cur + in3->prev, 7u);
  auto nodes = server_->command({"ZCARD", "rl:nodes"});
  ASSERT_TRUE(nodes);
  EXPECT_EQ(nodes->integer, 1);
}

class UnixSocketTest : public RedisTest {
 protected:
  RedisServerOptions server_options() const override { return {"", true}; }
};

TEST_F(UnixSocketTest, SyncsOverAUnixSocket) {
  auto store = this->store();
  ASSERT_TRUE(store);
  auto reply = store->sync({key_delta("api", "k", 3, 2, 60'000)});
  ASSERT_TRUE(reply) << reply.error().str();
  ASSERT_EQ(reply->over.size(), 1u);
  EXPECT_EQ(reply->over[0].estimate, 3u);
  // The server was started with no TCP port at all.
  EXPECT_EQ(server_->port(), 0);
}

}  // namespace
}  // namespace rl::testing
