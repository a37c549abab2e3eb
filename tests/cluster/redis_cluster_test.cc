// SPDX-License-Identifier: GPL-2.0-only
// Redis Cluster as fleets run it for capacity: three masters and three replicas, all real
// redis-server processes on loopback, joined by `redis-cli --cluster create`. The store learns
// the slots, spreads each rule's keys over the masters, follows a slot's migration (ASK, then
// MOVED) and a replica's promotion after its master dies, without being recreated.
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "cluster/cluster_store.h"
#include "cluster/pending.h"
#include "redis_cluster.h"
#include "redis_test.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cluster::kClusterSpread;

class RedisClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(RedisServer::binary().empty()) << "redis-server is required";
    ASSERT_FALSE(RedisCluster::cli().empty()) << "redis-cli is required";
    auto c = RedisCluster::start();
    ASSERT_TRUE(c) << c.error().str();
    cluster_ = std::move(*c);
  }

  cluster::RedisOptions options() const {
    cluster::RedisOptions o;
    o.cluster_nodes = {cluster_->seeds().front()};  // one seed: the rest is learnt
    o.command_timeout = 500ms;
    return o;
  }

  std::unique_ptr<cluster::ClusterStore> store() {
    auto s = cluster::ClusterStore::create(options());
    EXPECT_TRUE(s) << s.error().str();
    return s ? std::move(*s) : nullptr;
  }

  static std::string hash_of(const std::string& rule, const std::string& key) {
    const auto& tags = cluster::spread_tags(kClusterSpread);
    return cluster::spread_hash("rl", tags[cluster::spread_bucket(key, kClusterSpread)], rule,
                                kHourWindowMs);
  }

  // The count the slot's master holds for a key. A promotion closes the new master's
  // connections: a failed command is tried once more.
  uint64_t counted(const std::string& rule, const std::string& key) {
    const std::string hash = hash_of(rule, key);
    RedisServer* m = cluster_->master_of(cluster::key_slot(hash));
    if (!m) return 0;
    auto r = m->command({"HGET", hash, key});
    if (!r) r = m->command({"HGET", hash, key});
    if (!r || r->type != RedisValue::Type::kString) return 0;
    auto w = unpack_counts(r->str);
    return w ? w->cur + w->prev : 0;
  }

  // A key whose hash lives in `bucket`.
  static std::string key_in(uint32_t bucket, int n = 0) {
    for (int i = 0;; i++) {
      std::string key = "198.18." + std::to_string(i / 256) + "." + std::to_string(i % 256);
      if (cluster::spread_bucket(key, kClusterSpread) == bucket && n-- == 0) return key;
    }
  }

  template <typename Done>
  static bool wait_for(std::chrono::seconds limit, Done done) {
    for (auto end = Clock::now() + limit; Clock::now() < end; std::this_thread::sleep_for(100ms))
      if (done()) return true;
    return false;
  }

  std::unique_ptr<RedisCluster> cluster_;
};

TEST_F(RedisClusterTest, SpreadsARulesKeysOverTheMasters) {
  auto s = store();
  ASSERT_TRUE(s);
  std::vector<cluster::KeyDelta> deltas;
  deltas.reserve(6000);
  for (int i = 0; i < 6000; i++)
    deltas.push_back(key_delta("api",
                               "198.18." + std::to_string(i / 256) + "." + std::to_string(i % 256),
                               i % 1000 == 0 ? 50 : 1, 10, kHourWindowMs));
  auto reply = s->sync(deltas);
  ASSERT_TRUE(reply) << reply.error().str();
  EXPECT_TRUE(reply->retry.empty()) << reply->retry_reason;
  EXPECT_TRUE(reply->rejected.empty()) << reply->rejected_reason;
  ASSERT_EQ(reply->over.size(), 6u);
  for (const auto& o : reply->over) EXPECT_EQ(o.index % 1000, 0u);
  EXPECT_TRUE(s->connected());
  EXPECT_EQ(s->slot_map().masters.size(), 3u);

  // One round trip per master per sync, with one call per bucket the master serves.
  auto servers = s->servers();
  ASSERT_EQ(servers.size(), 3u);
  size_t slots = 0;
  std::printf("%zu keys over %u hashes:", deltas.size(), kClusterSpread);
  for (const auto& h : servers) {
    EXPECT_TRUE(h.up) << h.addr;
    EXPECT_EQ(h.calls, 1u) << h.addr;
    slots += h.slots;
    RedisServer* m = nullptr;
    for (const auto& n : cluster_->nodes())
      if (cluster_->address(*n) == h.addr) m = n.get();
    ASSERT_NE(m, nullptr) << h.addr;
    auto calls = m->command_calls("evalsha");
    ASSERT_TRUE(calls);
    EXPECT_EQ(*calls, kClusterSpread / 3) << h.addr << ": one call per bucket it serves";
    // How evenly the keys spread: each master's share of the fields.
    uint64_t fields = 0;
    auto keys = m->command({"KEYS", "rl:*"});
    ASSERT_TRUE(keys);
    for (const auto& k : keys->elements) {
      auto n = m->command({"HLEN", k.str});
      ASSERT_TRUE(n);
      fields += static_cast<uint64_t>(n->integer) - 1;  // less the script's own field
    }
    std::printf(" %s %lu", h.addr.c_str(), static_cast<unsigned long>(fields));
    EXPECT_GT(fields, 1700u) << h.addr;
    EXPECT_LT(fields, 2300u) << h.addr;
  }
  std::printf("\n");
  EXPECT_EQ(slots, 16384u);

  // The counts are where a reader of the key scheme finds them, and add up across syncs.
  EXPECT_EQ(counted("api", "198.18.0.1"), 1u);
  ASSERT_TRUE(s->sync({key_delta("api", "198.18.0.1", 4, 10, kHourWindowMs)}));
  EXPECT_EQ(counted("api", "198.18.0.1"), 5u);

  // Heartbeats on the master of the nodes key; another store sees them.
  ASSERT_TRUE(s->heartbeat("node-a"));
  auto other = store();
  ASSERT_TRUE(other->heartbeat("node-b"));
  auto peers = other->peers(60s);
  ASSERT_TRUE(peers) << peers.error().str();
  EXPECT_EQ(peers->size(), 2u);
}

// A slot moves from one master to another while the store syncs: before the keys move, the old
// master counts them; once its hash has moved, ASK sends the calls to the importing master
// behind ASKING; once the slot is reassigned, MOVED refreshes the map. No delta is lost or
// counted twice.
TEST_F(RedisClusterTest, FollowsASlotMigration) {
  auto s = store();
  ASSERT_TRUE(s);
  const std::string key = key_in(0);
  const std::string hash = hash_of("api", key);
  const uint16_t slot = cluster::key_slot(hash);
  RedisServer* from = cluster_->master_of(slot);
  ASSERT_NE(from, nullptr);
  RedisServer* to = cluster_->master_of((slot + 8192) % 16384);
  ASSERT_NE(to, nullptr);
  ASSERT_NE(from, to);
  auto from_id = cluster_->id(*from), to_id = cluster_->id(*to);
  ASSERT_TRUE(from_id && to_id);
  auto sync = [&](uint64_t d) {
    auto r = s->sync({key_delta("api", key, d, 1000, kHourWindowMs)});
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_TRUE(r->retry.empty()) << r->retry_reason;
    EXPECT_TRUE(r->rejected.empty()) << r->rejected_reason;
  };
  auto ok = [](const Result<RedisValue>& r) { return r && !r->is_error(); };
  const std::string n = std::to_string(slot);

  sync(1);
  ASSERT_TRUE(ok(to->command({"CLUSTER", "SETSLOT", n, "IMPORTING", *from_id})));
  ASSERT_TRUE(ok(from->command({"CLUSTER", "SETSLOT", n, "MIGRATING", *to_id})));
  sync(2);  // the hash is still on the old master, which counts it
  EXPECT_EQ(s->stats().ask, 0u);
  auto moved = from->command(
      {"MIGRATE", "127.0.0.1", std::to_string(to->port()), "", "0", "5000", "KEYS", hash});
  ASSERT_TRUE(ok(moved)) << (moved ? moved->str : moved.error().str());
  sync(4);  // ASK: counted on the importing master
  EXPECT_GE(s->stats().ask, 1u);
  for (const auto& node : cluster_->nodes()) {
    auto set = node->command({"CLUSTER", "SETSLOT", n, "NODE", *to_id});
    EXPECT_TRUE(set) << set.error().str();
  }
  sync(8);  // MOVED: the map is read again
  EXPECT_GE(s->stats().moved, 1u);
  EXPECT_GE(s->stats().topology_changes, 1u);
  sync(16);  // straight to the new master
  auto direct = to->command({"HGET", hash, key});
  ASSERT_TRUE(direct && direct->type == RedisValue::Type::kString);
  auto w = unpack_counts(direct->str);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->cur + w->prev, 31u) << "every delta once, on the master the slot moved to";
}

// A master dies: its deltas come back to be replayed while the others' count, until the
// cluster promotes its replica and the store reads the new map. Nothing is lost: the replica
// had every count when its master died (the test waits for that), and a failed delta is
// replayed, never dropped.
TEST_F(RedisClusterTest, SurvivesAMastersDeath) {
  auto s = store();
  ASSERT_TRUE(s);
  const std::string a = key_in(0), b = key_in(kClusterSpread / 2);
  const uint16_t slot_a = cluster::key_slot(hash_of("api", a));
  RedisServer* doomed = cluster_->master_of(slot_a);
  ASSERT_NE(doomed, nullptr);
  ASSERT_NE(cluster_->master_of(cluster::key_slot(hash_of("api", b))), doomed);
  cluster::PendingDeltas pending;
  uint64_t sent = 0;
  auto tick = [&] {
    pending.add(key_delta("api", a, 1, 1'000'000, kHourWindowMs));
    pending.add(key_delta("api", b, 1, 1'000'000, kHourWindowMs));
    sent++;
    auto batch = pending.take();
    auto r = s->sync(batch);
    if (!r) {
      pending.add(batch);
      return false;
    }
    for (size_t i : r->retry) pending.add(batch[i]);
    return r->retry.empty();
  };
  for (int i = 0; i < 10; i++) ASSERT_TRUE(tick());
  ASSERT_TRUE(wait_for(5s, [&] {
    for (const auto& n : cluster_->nodes()) {
      auto info = n->command({"INFO", "replication"});
      if (info && info->str.find("role:slave") != std::string::npos &&
          info->str.find("master_port:" + std::to_string(doomed->port())) != std::string::npos) {
        // A replica answers reads on a connection that asked for READONLY, else MOVED.
        auto ro = n->command({"READONLY"});
        auto got = n->command({"HGET", hash_of("api", a), a});
        return ro && got && got->type == RedisValue::Type::kString && unpack_counts(got->str) &&
               unpack_counts(got->str)->cur == sent;
      }
    }
    return false;
  })) << "the replica has every count before its master dies";

  const uint16_t dead = doomed->port();
  doomed->kill();
  const auto killed = Clock::now();
  bool back = false;
  for (auto end = killed + 30s; Clock::now() < end && !back; std::this_thread::sleep_for(100ms))
    back = tick() && s->connected();
  ASSERT_TRUE(back) << "no promotion followed within 30 s";
  const double took = std::chrono::duration<double>(Clock::now() - killed).count();
  std::printf("master killed: every sync whole again after %.1f s, %lu topology change(s)\n", took,
              static_cast<unsigned long>(s->stats().topology_changes));
  RedisServer* promoted = cluster_->master_of(slot_a);
  ASSERT_NE(promoted, nullptr);
  EXPECT_NE(promoted->port(), dead);
  EXPECT_GE(s->stats().topology_changes, 1u);
  EXPECT_EQ(counted("api", a), sent) << "every delta of the dead master's slot, once";
  EXPECT_EQ(counted("api", b), sent) << "every delta of the live master's slot, once";
}

// An ACL user given the documented permissions, base and cluster lines read from
// docs/cluster.md, on every node: the store syncs, heartbeats and follows a migration as that
// user; without CLUSTER SLOTS it is refused with the permission named.
TEST_F(RedisClusterTest, AnAclUserWithTheDocumentedPermissions) {
  const std::string password = "acl-cluster-pass";
  std::vector<RedisServer*> all;
  for (const auto& n : cluster_->nodes()) all.push_back(n.get());
  Status granted = grant_documented_acl(all, password, "+cluster|slots");
  ASSERT_TRUE(granted) << granted.error().str();
  auto o = options();
  o.user = "rld";
  o.password = password;
  auto s = cluster::ClusterStore::create(o);
  ASSERT_TRUE(s) << s.error().str();
  std::vector<cluster::KeyDelta> deltas;
  deltas.reserve(300);
  for (int i = 0; i < 300; i++)
    deltas.push_back(
        key_delta("api", "198.18.1." + std::to_string(i % 256) + ":" + std::to_string(i / 256), 1,
                  10, kHourWindowMs));
  auto r = (*s)->sync(deltas);
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_TRUE(r->retry.empty()) << r->retry_reason;
  EXPECT_TRUE(r->rejected.empty()) << r->rejected_reason;
  ASSERT_TRUE((*s)->heartbeat("node-a"));
  ASSERT_TRUE((*s)->peers(60s));

  // A slot moves: MOVED needs no permission, the map read again does.
  const std::string key = key_in(1);
  const uint16_t slot = cluster::key_slot(hash_of("api", key));
  RedisServer* to = cluster_->master_of((slot + 8192) % 16384);
  ASSERT_TRUE((*s)->sync({key_delta("api", key, 1, 10, kHourWindowMs)}));
  Status moved = cluster_->migrate_slot(slot, *to);
  ASSERT_TRUE(moved) << moved.error().str();
  auto after = (*s)->sync({key_delta("api", key, 1, 10, kHourWindowMs)});
  ASSERT_TRUE(after) << after.error().str();
  EXPECT_TRUE(after->retry.empty()) << after->retry_reason;
  EXPECT_GE((*s)->stats().moved, 1u);
  EXPECT_EQ(counted("api", key), 2u);

  for (const auto& n : cluster_->nodes()) {
    auto r2 = n->command({"ACL", "SETUSER", "rld", "-cluster|slots"});
    ASSERT_TRUE(r2 && !r2->is_error()) << (r2 ? r2->str : r2.error().str());
  }
  auto fresh = cluster::ClusterStore::create(o);
  ASSERT_TRUE(fresh);
  auto refused = (*fresh)->sync(deltas);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, cluster::ErrorKind::kPermission) << refused.error().str();
  EXPECT_NE(refused.error().message.find("cluster|slots"), std::string::npos)
      << refused.error().str();
}

TEST_F(RedisClusterTest, RefusesWhatIsNotACluster) {
  auto standalone = RedisServer::start();
  ASSERT_TRUE(standalone) << standalone.error().str();
  cluster::RedisOptions o;
  o.cluster_nodes = {{"127.0.0.1", (*standalone)->port(), ""}};
  auto s = cluster::ClusterStore::create(o);
  ASSERT_TRUE(s);
  auto r = (*s)->sync({key_delta("api", "198.18.0.1", 1, 10, kHourWindowMs)});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("cluster support disabled"), std::string::npos)
      << r.error().str();

  // A plain store pointed at a cluster node says what to configure.
  cluster::RedisOptions plain;
  plain.port = cluster_->nodes().front()->port();
  auto p = cluster::RedisStore::connect(plain);
  ASSERT_TRUE(p) << p.error().str();
  std::vector<cluster::KeyDelta> many;
  many.reserve(50);
  for (int i = 0; i < 50; i++)
    many.push_back(key_delta("r" + std::to_string(i), "198.18.0.1", 1, 10, kHourWindowMs));
  // The sync fails as a whole, its deltas kept for the caller to replay, with an error of its
  // own kind; so does a heartbeat whose key the node does not serve.
  auto refused = (*p)->sync(many);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, cluster::ErrorKind::kRedirect) << refused.error().str();
  EXPECT_NE(refused.error().message.find("redis_cluster_nodes"), std::string::npos)
      << refused.error().str();
  bool redirected = false;
  for (int i = 0; i < 50 && !redirected; i++) {
    cluster::RedisOptions named = plain;
    named.key_prefix = "p" + std::to_string(i);  // another nodes key, in another slot
    auto q = cluster::RedisStore::connect(named);
    ASSERT_TRUE(q) << q.error().str();
    auto hb = (*q)->heartbeat("node-a");
    if (hb) continue;
    redirected = true;
    EXPECT_EQ(hb.error().kind, cluster::ErrorKind::kRedirect) << hb.error().str();
    EXPECT_NE(hb.error().message.find("redis_cluster_nodes"), std::string::npos)
        << hb.error().str();
  }
  EXPECT_TRUE(redirected) << "no nodes key fell in another master's slots";

  o.cluster_nodes = {cluster_->seeds().front()};
  o.db = 1;
  EXPECT_EQ(cluster::ClusterStore::create(o).error().kind, cluster::ErrorKind::kInvalid);
}

}  // namespace
}  // namespace rl::testing
