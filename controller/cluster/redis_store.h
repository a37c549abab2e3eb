// SPDX-License-Identifier: GPL-2.0-only
// The fleet-wide counter store in Redis (docs/cluster.md). A sync is one pipelined round trip:
// one script call per rule carrying all of that rule's keys. Windows follow Redis' clock, so
// nodes with skewed clocks still share them. A failed command drops the connection; calls then
// fail fast until the backoff allows the next attempt, and no call blocks for longer than
// connect_timeout + command_timeout. Errors are values: nothing throws out of here.
//
// Not thread-safe: one caller (rld's cluster loop) owns a store.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/backoff.h"
#include "cluster/redis_conn.h"
#include "cluster/sentinel.h"
#include "cluster/store.h"
#include "cluster/tls.h"
#include "common/failure_log.h"
#include "common/result.h"

namespace rl::cluster {

struct Script;
class SyncBatch;

struct RedisOptions {
  std::string host = "127.0.0.1";  // an address: name resolution is not bounded by the timeout
  int port = 6379;
  std::string unix_socket;  // used instead of host:port when set
  std::string user;         // an ACL user (AUTH user password); "" is the default user
  std::string password;     // AUTH when set
  int db = 0;               // SELECT when not 0
  std::chrono::milliseconds connect_timeout{200};
  // For a whole call's round trip: it must cover the biggest sync's time in Redis.
  std::chrono::milliseconds command_timeout{200};
  std::string key_prefix = "rl";  // no '{' or '}': it precedes the hash tag
  // With sentinels, the master of sentinel.master_name, asked for before every connection;
  // host, port and unix_socket are then not used.
  SentinelOptions sentinel;
  // A Redis Cluster (cluster_store.h): some of its nodes, from which it learns the rest. With
  // them, host, port, unix_socket, db and sentinel are not used.
  std::vector<Endpoint> cluster_nodes;
  // How many hashes a rule's keys are spread over (slots.h): 1 on one server, kClusterSpread on
  // a Redis Cluster, the same on every node of a fleet.
  uint32_t spread = 1;
  // TLS for every connection: the server, the sentinels, the cluster's nodes (tls.h).
  TlsOptions tls;
  // This store is one master of a Redis Cluster: MOVED and ASK replies come back as
  // SyncReply::redirected, CLUSTERDOWN and TRYAGAIN as SyncReply::retry.
  bool cluster_node = false;
};

class RedisStore final : public Store {
 public:
  using Clock = std::chrono::steady_clock;

  struct Stats {
    uint64_t connect_attempts = 0;  // every try, failed or not
    uint64_t connects = 0;          // connections that passed AUTH, SELECT and SCRIPT LOAD
    uint64_t round_trips = 0;
    uint64_t script_reloads = 0;   // script calls resent as EVAL after NOSCRIPT
    uint64_t masters_changed = 0;  // with sentinels: connections to another master than before
  };
  // The server calls go to: the master the sentinels named last, with sentinels.
  const Endpoint& endpoint() const { return endpoint_; }

  // Validates the options and connects; fails if Redis cannot be reached or refuses us.
  static StoreResult<std::unique_ptr<RedisStore>> connect(const RedisOptions& opts);
  // Validates the options only; the first call connects. For a daemon that must start while
  // Redis is down. `tls` is a context made already (a cluster's masters share one); without
  // it, one is made from opts.tls when that is enabled.
  static StoreResult<std::unique_ptr<RedisStore>> create(
      const RedisOptions& opts, std::shared_ptr<const TlsContext> tls = nullptr);

  RedisStore(const RedisStore&) = delete;
  RedisStore& operator=(const RedisStore&) = delete;

  StoreResult<SyncReply> sync(const std::vector<KeyDelta>& deltas) override;
  // Each script call goes out as soon as the stream has its keys: Redis counts the first ones
  // while the caller is still reading the rest.
  std::unique_ptr<SyncStream> begin_sync() override;
  // A sync whose every call is preceded by ASKING: for keys an ASK redirect sent here, whose
  // slot is being imported.
  std::unique_ptr<SyncStream> begin_asking_sync();
  // Keeps a node that has been silent for an hour, then forgets it.
  StoreStatus heartbeat(const std::string& node) override;
  StoreResult<std::vector<Peer>> peers(std::chrono::milliseconds within) override;
  StoreStatus check() override;
  // Only the connection: the handshake (TLS, AUTH, SELECT, the scripts, ROLE behind sentinels).
  StoreStatus check_connection();
  // Whether the last call reached Redis and got its replies.
  bool connected() const override { return connected_; }
  std::string server() const override;
  uint64_t servers_changed() const override { return stats_.masters_changed; }

  const Stats& stats() const { return stats_; }
  // How much longer calls fail fast before the next connection attempt (0: not backing off).
  std::chrono::milliseconds backoff_remaining() const;

 private:
  struct ScriptCall {
    const Script* script;
    std::vector<std::string_view> keys;
    std::vector<std::string_view> args;
  };

  // One sync's calls on their way: the round begins with the first complete call.
  struct Round {
    explicit Round(std::string w) : what(std::move(w)), start(Clock::now()) {}
    std::string what;
    Clock::time_point start;
    std::optional<Clock::time_point> deadline;
    std::optional<StoreError> failed;
    std::vector<size_t> sent;  // call indices in the order they went out, as replies come back
  };
  class Stream;

  RedisStore(const RedisOptions& opts, std::shared_ptr<const TlsContext> tls);
  void send_ready(Round& round, const SyncBatch& batch, size_t call);
  StoreResult<SyncReply> finish_sync(Round& round, const SyncBatch& batch);
  // A cluster node's error reply to a sync call that another call can settle: true when the
  // call's deltas went to out.redirected or out.retry.
  bool settle_elsewhere(const redisReply& r, const std::vector<size_t>& indices,
                        SyncReply& out) const;
  void flush_round(Round& round);
  StoreStatus open_connection(Clock::time_point now);
  StoreStatus queue(const ScriptCall& call, bool by_sha);
  std::optional<StoreError> check_handshake(const Exchange& ex) const;
  // The calls in one round trip (connecting first if needed, the handshake riding along),
  // plus one more for any call the server had no script for. An error reply is a reply.
  StoreResult<std::vector<Reply>> run(const std::vector<ScriptCall>& calls,
                                      const std::string& what);
  // run() in three steps, for a caller that makes its calls while earlier ones are already
  // running: begin_round connects if needed and returns the round's deadline; send_call queues
  // a call and writes out what is queued past kSendAheadBytes; end_round reads every reply.
  // Their errors have already dropped the connection.
  StoreResult<Clock::time_point> begin_round(const std::string& what);
  StoreStatus send_call(const ScriptCall& call, Clock::time_point deadline,
                        const std::string& what);
  StoreResult<std::vector<Reply>> end_round(const std::vector<ScriptCall>& calls,
                                            Clock::time_point deadline, const std::string& what);
  // Drops the connection after e, logging where it failed (the server, unless `where` names
  // what else was asked: the sentinels).
  StoreError broken(const StoreError& e, const std::string& where = "");
  std::string sentinels_text() const;
  // An error reply after the handshake; a replica's READONLY drops the connection, so that the
  // next call asks the sentinels again.
  StoreError reply_failed(const redisReply& r, const std::string& what);
  StoreStatus find_master();
  void recheck_master(Clock::time_point now);
  static constexpr std::chrono::seconds kSentinelRecheck{1};

  RedisOptions opts_;
  std::shared_ptr<const TlsContext> tls_;  // null for plain connections
  Endpoint endpoint_;
  std::string nodes_key_;
  std::optional<RedisConn> conn_;
  struct HandshakeStep {
    std::string what;                        // "AUTH", "SELECT 3", "SCRIPT LOAD sync"
    const Script* script = nullptr;          // for SCRIPT LOAD: the SHA1 the reply must be
    ErrorKind refused = ErrorKind::kServer;  // what an error reply without a known code means
    bool must_be_master = false;             // ROLE: the reply must say "master"
  };
  std::vector<HandshakeStep> handshake_;  // queued ahead of the next exchange
  Backoff backoff_;
  StoreError last_error_;
  std::string last_where_;  // where last_error_ happened
  log::FailureLog conn_log_{"redis connection"};
  bool connected_ = false;
  Stats stats_;
  size_t next_sentinel_ = 0;  // the one asked first next time: rotates past a failed one
  Clock::time_point next_recheck_{};
  bool master_known_ = false;
  bool asking_ = false;  // every script call is preceded by ASKING (begin_asking_sync)
};

}  // namespace rl::cluster
