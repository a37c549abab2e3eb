// SPDX-License-Identifier: GPL-2.0-only
// TLS to Redis as fleets run it: real redis-servers with a TLS port only, and a private CA made
// by openssl for each test. The store verifies the server against the CA and the name, shows a
// client certificate when the server asks for one, and says why when the handshake fails. The
// same holds through Sentinel and on a Redis Cluster, whose nodes talk TLS among themselves.
#include <chrono>
#include <thread>

#include "cluster/cluster_store.h"
#include "cluster/pending.h"
#include "redis_cluster.h"
#include "redis_test.h"
#include "test_pki.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cluster::ErrorKind;

template <typename Done>
bool wait_for(std::chrono::seconds limit, Done done) {
  for (auto end = Clock::now() + limit; Clock::now() < end; std::this_thread::sleep_for(100ms))
    if (done()) return true;
  return false;
}

// The count a server holds for a key of rule "api" in a single-hash (non-cluster) store.
uint64_t counted(RedisServer& s, const std::string& key) {
  const std::vector<std::string> hget = {"HGET", cluster::rule_hash("rl", "api", kHourWindowMs),
                                         key};
  auto r = s.command(hget);
  if (!r) r = s.command(hget);  // a promotion closes the new master's connections
  if (!r || r->type != RedisValue::Type::kString) return 0;
  auto w = unpack_counts(r->str);
  return w ? w->cur + w->prev : 0;
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(RedisServer::binary().empty()) << "redis-server is required";
    auto pki = TestPki::create();
    ASSERT_TRUE(pki) << pki.error().str();
    pki_.emplace(std::move(*pki));
  }

  RedisServerOptions server_options(bool auth_clients = false) const {
    return {.tls_cert = pki_->server_cert,
            .tls_key = pki_->server_key,
            .tls_ca = pki_->ca,
            .tls_auth_clients = auth_clients};
  }

  void start_server(bool auth_clients = false) {
    auto s = RedisServer::start(server_options(auth_clients));
    ASSERT_TRUE(s) << s.error().str();
    server_ = std::move(*s);
  }

  cluster::RedisOptions options() const {
    cluster::RedisOptions o;
    o.port = server_->port();
    o.tls.enabled = true;
    o.tls.ca_file = pki_->ca;
    o.connect_timeout = 1s;
    o.command_timeout = 1s;
    return o;
  }

  // The store's first connection: its error when it cannot be made.
  static std::optional<cluster::StoreError> refusal(const cluster::RedisOptions& o) {
    auto s = cluster::RedisStore::connect(o);
    if (s) return std::nullopt;
    return s.error();
  }

  std::optional<TestPki> pki_;
  std::unique_ptr<RedisServer> server_;
};

TEST_F(TlsTest, SyncsOverTlsWithTheServerVerified) {
  ASSERT_NO_FATAL_FAILURE(start_server());
  auto store = cluster::RedisStore::connect(options());
  ASSERT_TRUE(store) << store.error().str();
  ASSERT_TRUE((*store)->sync({key_delta("api", "198.18.0.7", 5, 100, kHourWindowMs)}));
  ASSERT_TRUE((*store)->heartbeat("node-a"));
  // A sync bigger than one TLS record and one socket buffer, to cover partial writes.
  std::vector<cluster::KeyDelta> many;
  many.reserve(20'000);
  for (int i = 0; i < 20'000; i++)
    many.push_back(key_delta("api",
                             "198.19." + std::to_string(i / 256) + "." + std::to_string(i % 256), 1,
                             100, kHourWindowMs));
  auto big = (*store)->sync(many);
  ASSERT_TRUE(big) << big.error().str();
  EXPECT_EQ(counted(*server_, "198.18.0.7"), 5u);
  EXPECT_EQ(counted(*server_, "198.19.78.31"), 1u);
}

TEST_F(TlsTest, RefusesAServerTheCaDidNotSign) {
  ASSERT_NO_FATAL_FAILURE(start_server());
  cluster::RedisOptions o = options();
  o.tls.ca_file = pki_->other_ca;
  auto e = refusal(o);
  ASSERT_TRUE(e) << "a server signed by another CA was trusted";
  EXPECT_EQ(e->kind, ErrorKind::kTls) << e->str();
  EXPECT_NE(e->message.find("certificate verify failed"), std::string::npos) << e->str();
  // The system's CAs did not sign it either.
  o.tls.ca_file.clear();
  e = refusal(o);
  ASSERT_TRUE(e) << "a private CA's server was trusted by the system's CAs";
  EXPECT_EQ(e->kind, ErrorKind::kTls) << e->str();
}

TEST_F(TlsTest, ChecksTheServerName) {
  ASSERT_NO_FATAL_FAILURE(start_server());
  cluster::RedisOptions o = options();
  o.tls.server_name = "redis.test";
  auto store = cluster::RedisStore::connect(o);
  ASSERT_TRUE(store) << store.error().str();
  ASSERT_TRUE((*store)->sync({key_delta("api", "198.18.0.8", 1, 100, kHourWindowMs)}));

  o.tls.server_name = "cache.test";
  auto e = refusal(o);
  ASSERT_TRUE(e) << "a certificate for redis.test was taken for cache.test";
  EXPECT_EQ(e->kind, ErrorKind::kTls) << e->str();
  EXPECT_NE(e->message.find("hostname mismatch"), std::string::npos) << e->str();
  // An address as the name is checked against the certificate's IP SANs: it has 127.0.0.1
  // (which the tests above connect to, with no name given), not 127.0.0.2.
  o.tls.server_name = "127.0.0.2";
  e = refusal(o);
  ASSERT_TRUE(e) << "a certificate for 127.0.0.1 was taken for 127.0.0.2";
  EXPECT_EQ(e->kind, ErrorKind::kTls) << e->str();
  EXPECT_NE(e->message.find("IP address mismatch"), std::string::npos) << e->str();
  o.tls.server_name = "127.0.0.1";
  EXPECT_FALSE(refusal(o));
}

TEST_F(TlsTest, ShowsAClientCertificateWhenTheServerAsks) {
  ASSERT_NO_FATAL_FAILURE(start_server(true));
  cluster::RedisOptions o = options();
  auto e = refusal(o);
  ASSERT_TRUE(e) << "a server that requires client certificates took a client without one";
  EXPECT_EQ(e->kind, ErrorKind::kTls) << e->str();
  EXPECT_NE(e->message.find("certificate required"), std::string::npos) << e->str();

  o.tls.cert_file = pki_->client_cert;
  o.tls.key_file = pki_->client_key;
  auto store = cluster::RedisStore::connect(o);
  ASSERT_TRUE(store) << store.error().str();
  ASSERT_TRUE((*store)->sync({key_delta("api", "198.18.0.9", 2, 100, kHourWindowMs)}));
  EXPECT_EQ(counted(*server_, "198.18.0.9"), 2u);
}

// A plain client at a TLS port, and a TLS client at a plain one: each fails within its timeout
// and says so, nothing hangs.
TEST_F(TlsTest, AMismatchedPortFailsWithinTheTimeout) {
  ASSERT_NO_FATAL_FAILURE(start_server());
  cluster::RedisOptions plain = options();
  plain.tls = {};
  auto t0 = Clock::now();
  auto e = refusal(plain);
  ASSERT_TRUE(e) << "a plain client talked to a TLS port";
  EXPECT_LT(Clock::now() - t0, 2500ms) << e->str();
  EXPECT_TRUE(e->kind == ErrorKind::kConnectionLost || e->kind == ErrorKind::kTimeout) << e->str();

  auto plain_server = RedisServer::start();
  ASSERT_TRUE(plain_server) << plain_server.error().str();
  cluster::RedisOptions tls = options();
  tls.port = (*plain_server)->port();
  t0 = Clock::now();
  e = refusal(tls);
  ASSERT_TRUE(e) << "a TLS client talked to a plain port";
  EXPECT_LT(Clock::now() - t0, 2500ms) << e->str();
  // Redis waits for the rest of a line that never comes: the handshake has no answer.
  EXPECT_EQ(e->kind, ErrorKind::kTimeout) << e->str();
  EXPECT_NE(e->message.find("TLS handshake"), std::string::npos) << e->str();
}

TEST_F(TlsTest, RefusesOptionsThatCannotWork) {
  auto invalid = [](const cluster::RedisOptions& o) {
    auto s = cluster::RedisStore::create(o);
    return s ? std::string() : s.error().str();
  };
  cluster::RedisOptions o;
  o.tls.enabled = true;
  o.tls.ca_file = pki_->dir->path() + "/missing.crt";
  EXPECT_NE(invalid(o).find("CA file"), std::string::npos) << invalid(o);
  o.tls.ca_file = pki_->ca;
  o.tls.cert_file = pki_->client_cert;
  EXPECT_NE(invalid(o).find("needs its key"), std::string::npos) << invalid(o);
  o.tls.key_file = pki_->server_key;
  EXPECT_NE(invalid(o).find("key file"), std::string::npos) << invalid(o);
  o.tls.key_file = pki_->client_key;
  EXPECT_EQ(invalid(o), "");
  o.unix_socket = "/run/redis/redis.sock";
  EXPECT_NE(invalid(o).find("TLS is for TCP"), std::string::npos) << invalid(o);
  cluster::RedisOptions off;
  off.tls.ca_file = pki_->ca;
  EXPECT_NE(invalid(off).find("TLS is off"), std::string::npos) << invalid(off);
}

// A master, its replica and three sentinels, all TLS only: the store asks the sentinels over
// TLS and follows the master's death to the promoted replica.
TEST_F(TlsTest, FollowsAFailoverThroughSentinelsOverTls) {
  auto master = RedisServer::start(server_options());
  ASSERT_TRUE(master) << master.error().str();
  RedisServerOptions r = server_options();
  r.replica_of = (*master)->port();
  auto replica = RedisServer::start(r);
  ASSERT_TRUE(replica) << replica.error().str();
  std::vector<std::unique_ptr<RedisServer>> sentinels;
  for (int i = 0; i < 3; i++) {
    RedisServerOptions so = server_options();
    so.sentinel_for = (*master)->port();
    auto s = RedisServer::start(so);
    ASSERT_TRUE(s) << s.error().str();
    sentinels.push_back(std::move(*s));
  }
  std::string waiting;
  ASSERT_TRUE(wait_for(20s, [&] { return sentinels_ready(**replica, sentinels, &waiting); }))
      << "the sentinels never met; " << waiting;

  cluster::RedisOptions o;
  for (const auto& s : sentinels) o.sentinel.sentinels.push_back({"127.0.0.1", s->port(), ""});
  o.sentinel.master_name = kSentinelMaster;
  o.tls.enabled = true;
  o.tls.ca_file = pki_->ca;
  o.command_timeout = 500ms;
  auto store = cluster::RedisStore::connect(o);
  ASSERT_TRUE(store) << store.error().str();
  EXPECT_EQ((*store)->endpoint().port, (*master)->port());
  ASSERT_TRUE((*store)->sync({key_delta("api", "198.18.0.7", 5, 100, kHourWindowMs)}));
  ASSERT_TRUE(wait_for(5s, [&] { return counted(**replica, "198.18.0.7") == 5; }))
      << "the replica has the count before the master dies";

  (*master)->kill();
  const uint16_t promoted = (*replica)->port();
  cluster::PendingDeltas pending;
  uint64_t after = 0;
  for (auto end = Clock::now() + 30s;
       Clock::now() < end && !((*store)->connected() && (*store)->endpoint().port == promoted);
       std::this_thread::sleep_for(100ms)) {
    pending.add(key_delta("api", "198.18.0.7", 1, 1'000'000, kHourWindowMs));
    after++;
    auto batch = pending.take();
    if (!(*store)->sync(batch)) pending.add(batch);
  }
  ASSERT_EQ((*store)->endpoint().port, promoted) << "no failover within 30 s";
  ASSERT_TRUE((*store)->sync(pending.take()));
  EXPECT_EQ(counted(**replica, "198.18.0.7"), 5 + after) << "every delta, before and after";
}

// Three masters and three replicas whose clients, replication and bus are all TLS: the store
// learns the slots and spreads a sync over every master through TLS connections.
TEST_F(TlsTest, SyncsToARedisClusterOverTls) {
  ASSERT_FALSE(RedisCluster::cli().empty()) << "redis-cli is required";
  auto c = RedisCluster::start(
      {.tls_cert = pki_->server_cert, .tls_key = pki_->server_key, .tls_ca = pki_->ca});
  ASSERT_TRUE(c) << c.error().str();
  cluster::RedisOptions o;
  o.cluster_nodes = {(*c)->seeds().front()};
  o.tls.enabled = true;
  o.tls.ca_file = pki_->ca;
  o.command_timeout = 1s;
  auto store = cluster::ClusterStore::create(o);
  ASSERT_TRUE(store) << store.error().str();
  std::vector<cluster::KeyDelta> deltas;
  deltas.reserve(600);
  for (int i = 0; i < 600; i++)
    deltas.push_back(key_delta("api",
                               "198.18." + std::to_string(i / 256) + "." + std::to_string(i % 256),
                               1, 100, kHourWindowMs));
  auto reply = (*store)->sync(deltas);
  ASSERT_TRUE(reply) << reply.error().str();
  EXPECT_TRUE(reply->retry.empty());
  auto servers = (*store)->servers();
  ASSERT_EQ(servers.size(), 3u);
  for (const auto& s : servers) {
    EXPECT_TRUE(s.up) << s.addr;
    EXPECT_GT(s.calls, 0u) << s.addr << " had no share of the sync";
  }
  // Each master holds its share: the keys of the hashes in its slots.
  uint64_t held = 0;
  for (const auto& n : (*c)->nodes()) {
    auto keys = n->command({"DBSIZE"});
    ASSERT_TRUE(keys) << keys.error().str();
    auto role = n->command({"ROLE"});
    ASSERT_TRUE(role && !role->elements.empty()) << (role ? role->str : role.error().str());
    if (role->elements[0].str == "master") held += static_cast<uint64_t>(keys->integer);
  }
  EXPECT_GT(held, 0u);
}

}  // namespace
}  // namespace rl::testing
