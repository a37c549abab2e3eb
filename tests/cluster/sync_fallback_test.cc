// SPDX-License-Identifier: GPL-2.0-only
// A cluster rule while Redis is unreachable, over the in-memory data path: a closed rule holds
// each key to its share of the fleet's limit (limit / nodes) on this node, an open one blocks
// nothing, and cluster.status says so. The cluster lab test does the same against a real
// redis-server and real packets.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "cluster/sync/cluster_sync.h"
#include "daemon/handlers/handlers.h"
#include "daemon/key_state.h"
#include "fake_datapath.h"
#include "rule_views.h"

namespace rl::daemon {
namespace {

using cluster::ClusterConfig;
using cluster::ClusterSync;
using cluster::SyncRule;
using testing::FakeDatapath;

// Redis, down: every call fails with `error`, by default as a refused connection does.
class DownStore : public cluster::Store {
 public:
  explicit DownStore(cluster::StoreError error = {cluster::ErrorKind::kUnreachable, ECONNREFUSED,
                                                  "connect to redis"})
      : error_(std::move(error)) {}
  cluster::StoreResult<cluster::SyncReply> sync(const std::vector<cluster::KeyDelta>&) override {
    return error_;
  }
  cluster::StoreStatus heartbeat(const std::string&) override { return error_; }
  cluster::StoreResult<std::vector<cluster::Peer>> peers(std::chrono::milliseconds) override {
    return error_;
  }
  bool connected() const override { return false; }

 private:
  cluster::StoreError error_;
};

SyncRule cluster_rule(const std::string& name, uint32_t id, policy::RedisFailure on_failure) {
  SyncRule v;
  v.name = name;
  v.compiled.id = id;
  v.compiled.key_kind = RL_KEY_SRC_ADDR;
  v.compiled.flags = RL_RULE_F_CLUSTER;
  v.limit = policy::ClusterLimit{{100, 60'000'000'000ULL, policy::Unit::kPackets}, on_failure};
  return v;
}

// Runs the sync thread until `done` or two seconds.
template <class Done>
bool run_until(ClusterSync& sync, Done done) {
  sync.start();
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!done() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return done();
}

TEST(ClusterFallback, ClosedRulesHoldEachKeyToItsShareWithoutRedis) {
  FakeDatapath dp;
  std::vector<SyncRule> rules = {cluster_rule("closed", 1, policy::RedisFailure::kClosed),
                                 cluster_rule("open", 2, policy::RedisFailure::kOpen)};
  auto addr = Address::parse("198.18.0.7");
  ASSERT_TRUE(addr);
  rl_key over_share = key_for(rules[0].compiled, *addr, 0);
  rl_key open_key = key_for(rules[1].compiled, *addr, 0);
  rl_key within = key_for(rules[0].compiled, *Address::parse("198.18.0.8"), 0);
  // Two nodes: a share of 50 per minute. 80 admitted here is over it; 10 is not.
  dp.admitted = {{over_share, 80}, {open_key, 80}, {within, 10}};

  ClusterConfig cfg;
  cfg.node = "node-a";
  cfg.nodes = 2;
  cfg.interval = std::chrono::milliseconds(10);
  // The fake is read by the sync thread only while this test waits on it.
  ClusterSync sync(dp, std::make_unique<DownStore>(), cfg, [&] { return rules; });
  ASSERT_TRUE(
      run_until(sync, [&] { return !sync.stats().errors.empty() && sync.stats().passes >= 3; }));
  auto st = sync.stats();
  EXPECT_FALSE(st.redis_up);
  ASSERT_EQ(sync.blocked().size(), 1u);
  EXPECT_EQ(sync.blocked()[0].rule, "closed");
  EXPECT_EQ(sync.blocked()[0].key, "198.18.0.7");
  EXPECT_EQ(st.pending_keys, 3u) << "what Redis did not hear waits for it";

  // rlctl cluster status tells the same.
  auto r = handlers::cluster_status(&sync, cfg.node);
  ASSERT_TRUE(r["ok"]) << r.dump();
  const auto& d = r["data"];
  EXPECT_EQ(d["node"], "node-a");
  EXPECT_EQ(d["redis_up"], false);
  EXPECT_TRUE(d["last_sync_ms_ago"].is_null()) << "never synced";
  EXPECT_EQ(d["syncs"], 0);
  EXPECT_EQ(d["pending_keys"], 3);
  EXPECT_GE(d["errors"]["unavailable"].get<uint64_t>(), 1u);
  EXPECT_TRUE(d["peers"].empty());
  ASSERT_EQ(d["blocked"].size(), 1u);
  EXPECT_EQ(d["blocked"][0]["rule"], "closed");
  EXPECT_EQ(d["blocked"][0]["key"], "198.18.0.7");
  EXPECT_GT(d["blocked"][0]["remaining_ms"].get<uint64_t>(), 0u);
  EXPECT_LE(d["blocked"][0]["remaining_ms"].get<uint64_t>(), 60'000u) << "within the window";
}

// Redis down until heal(): every sync fails as a refused connection does, each with another
// "next attempt in N ms", as a backing-off store's errors read; heartbeats answer.
class FlakyStore : public cluster::Store {
 public:
  cluster::StoreResult<cluster::SyncReply> sync(const std::vector<cluster::KeyDelta>&) override {
    uint64_t n = ++calls_;
    if (healed_) return cluster::SyncReply{};
    return cluster::StoreError{
        cluster::ErrorKind::kUnreachable, ECONNREFUSED,
        "127.0.0.1:6379: not connected, next attempt in " + std::to_string(n % 97) + " ms"};
  }
  cluster::StoreStatus heartbeat(const std::string&) override { return cluster::StoreStatus::Ok(); }
  cluster::StoreResult<std::vector<cluster::Peer>> peers(std::chrono::milliseconds) override {
    return std::vector<cluster::Peer>{};
  }
  bool connected() const override { return healed_; }
  uint64_t calls() const { return calls_; }
  void heal() { healed_ = true; }

 private:
  std::atomic<uint64_t> calls_{0};
  std::atomic<bool> healed_{false};
};

// One open rule with traffic to sync, against a store whose every call fails with `error`.
struct FailingSync {
  explicit FailingSync(cluster::StoreError error)
      : rules{cluster_rule("open", 1, policy::RedisFailure::kOpen)} {
    dp.admitted = {{key_for(rules[0].compiled, *Address::parse("198.18.0.7"), 0), 10}};
    cfg.interval = std::chrono::milliseconds(10);
    sync = std::make_unique<ClusterSync>(dp, std::make_unique<DownStore>(std::move(error)), cfg,
                                         [this] { return rules; });
  }
  FakeDatapath dp;
  std::vector<SyncRule> rules;
  ClusterConfig cfg;
  std::unique_ptr<ClusterSync> sync;
};

// A failed sync counts as a timeout by the error's kind, whatever its message says.
TEST(ClusterFallback, FailuresAreCountedByKind) {
  FailingSync f({cluster::ErrorKind::kTimeout, 0, "no reply in time"});
  ASSERT_TRUE(run_until(*f.sync, [&] { return f.sync->stats().errors.count("timeout") > 0; }));
  EXPECT_EQ(f.sync->stats().errors.count("unavailable"), 0u);
}

// A missing ACL permission is named, in the counts and in what cluster status shows, as Redis
// named it.
TEST(ClusterFallback, AMissingPermissionIsNamed) {
  const std::string noperm = "NOPERM this user has no permissions to run the 'zadd' command";
  FailingSync f({cluster::ErrorKind::kPermission, 0, noperm});
  ClusterSync& sync = *f.sync;
  ASSERT_TRUE(run_until(sync, [&] { return sync.stats().errors.count("permission") > 0; }));
  EXPECT_NE(sync.stats().last_error.find(noperm), std::string::npos) << sync.stats().last_error;
  auto r = handlers::cluster_status(&sync, f.cfg.node);
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_NE(r["data"]["last_error"].get<std::string>().find("'zadd'"), std::string::npos);
}

// A Redis Cluster node named as one server: a kind of its own in the counts (and so in
// /metrics), and cluster status says what to configure.
TEST(ClusterFallback, AClusterNodeNamedAsOneServerIsARedirect) {
  FailingSync f({cluster::ErrorKind::kRedirect, 0,
                 "127.0.0.1:7000: sync: MOVED 866 127.0.0.1:7001 (127.0.0.1:7000 is a Redis "
                 "Cluster node: name the cluster's nodes in redis_cluster_nodes, not redis_host)"});
  ClusterSync& sync = *f.sync;
  ASSERT_TRUE(run_until(sync, [&] { return sync.stats().errors.count("redirect") > 0; }));
  EXPECT_EQ(sync.stats().errors.count("unavailable"), 0u);
  auto r = handlers::cluster_status(&sync, f.cfg.node);
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_FALSE(r["data"]["redis_up"].get<bool>()) << r.dump();
  EXPECT_NE(r["data"]["last_error"].get<std::string>().find("redis_cluster_nodes"),
            std::string::npos);
}

// A failure that lasts is logged once when it starts, not once per pass: a hundred failed
// passes make one line, and the first success after them one more.
TEST(ClusterFallback, APersistingFailureIsLoggedOnceThenOnceWhenItEnds) {
  auto store = std::make_unique<FlakyStore>();
  FlakyStore* flaky = store.get();
  FakeDatapath dp;
  std::vector<SyncRule> rules = {cluster_rule("open", 1, policy::RedisFailure::kOpen)};
  // One delta, kept pending by every failed pass and so sent again by the next.
  dp.admitted = {{key_for(rules[0].compiled, *Address::parse("198.18.0.7"), 0), 10}};
  ClusterConfig cfg;
  cfg.interval = std::chrono::milliseconds(1);
  auto sync = std::make_unique<ClusterSync>(dp, std::move(store), cfg, [&] { return rules; });
  ::testing::internal::CaptureStderr();
  bool failed_long = run_until(*sync, [&] { return flaky->calls() >= 100; });
  flaky->heal();
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (sync->stats().syncs == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  bool recovered = sync->stats().syncs > 0;
  uint64_t failures = sync->stats().errors["unavailable"];
  sync.reset();  // the thread stops
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(failed_long && recovered) << log;
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) n++;
    return n;
  };
  EXPECT_GE(failures, 99u);
  EXPECT_EQ(count("msg=\"cluster sync failing\""), 1u) << log;
  EXPECT_EQ(count("msg=\"cluster sync recovered\""), 1u) << log;
  EXPECT_NE(log.find("failures=" + std::to_string(failures)), std::string::npos) << log;
}

// A Redis Cluster with one master down: its keys come back as SyncReply::retry while the rest
// count. Those deltas are replayed with the next sync, and their keys judged as with Redis down.
class HalfDownStore : public cluster::Store {
 public:
  explicit HalfDownStore(std::string down_key) : down_key_(std::move(down_key)) {}
  cluster::StoreResult<cluster::SyncReply> sync(
      const std::vector<cluster::KeyDelta>& deltas) override {
    std::lock_guard lock(mu_);
    calls_.push_back(deltas);
    cluster::SyncReply r;
    r.server_time_ms = 1;
    if (calls_.size() == 1)
      for (size_t i = 0; i < deltas.size(); i++)
        if (deltas[i].key == down_key_) r.retry.push_back(i);
    r.retry_reason = "the master of its slot is down";
    return r;
  }
  cluster::StoreStatus heartbeat(const std::string&) override { return cluster::StoreStatus::Ok(); }
  cluster::StoreResult<std::vector<cluster::Peer>> peers(std::chrono::milliseconds) override {
    return std::vector<cluster::Peer>{};
  }
  bool connected() const override { return true; }
  std::vector<std::vector<cluster::KeyDelta>> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::string down_key_;
  mutable std::mutex mu_;
  std::vector<std::vector<cluster::KeyDelta>> calls_;
};

TEST(ClusterFallback, APartialSyncReplaysWhatFailed) {
  FakeDatapath dp;
  std::vector<SyncRule> rules = {cluster_rule("closed", 1, policy::RedisFailure::kClosed)};
  rl_key down = key_for(rules[0].compiled, *Address::parse("198.18.0.7"), 0);
  rl_key up = key_for(rules[0].compiled, *Address::parse("198.18.0.8"), 0);
  dp.admitted = {{down, 80}, {up, 10}};  // two nodes: 80 is over a share of 50
  ClusterConfig cfg;
  cfg.nodes = 2;
  cfg.interval = std::chrono::milliseconds(10);
  auto store = std::make_unique<HalfDownStore>("198.18.0.7");
  HalfDownStore& seen = *store;
  ClusterSync sync(dp, std::move(store), cfg, [&] { return rules; });
  ASSERT_TRUE(run_until(sync, [&] { return seen.calls().size() >= 2; }));
  auto calls = seen.calls();
  ASSERT_EQ(calls[0].size(), 2u);
  ASSERT_EQ(calls[1].size(), 1u) << "only what failed is sent again; nothing new was admitted";
  EXPECT_EQ(calls[1][0].key, "198.18.0.7");
  EXPECT_EQ(calls[1][0].delta, 80u);
  EXPECT_GE(sync.stats().errors.at("partial"), 1u);
  ASSERT_EQ(sync.blocked().size(), 1u) << "judged by on_redis_failure: closed";
  EXPECT_EQ(sync.blocked()[0].key, "198.18.0.7");
}

}  // namespace
}  // namespace rl::daemon
