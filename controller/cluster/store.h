// SPDX-License-Identifier: GPL-2.0-only
// The fleet-wide counter store: every node adds what its kernel admitted for each key of a
// cluster rule since the last sync, and learns which keys are over the fleet's limit. One call
// is one round trip to Redis, however many keys it carries. Errors carry their kind
// (cluster/error.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/error.h"

namespace rl::cluster {

// One key of one cluster rule, as every node names it: the same rule name and key text on
// every node map to the same Redis key.
struct KeyDelta {
  std::string rule;        // rule name, e.g. "api-per-source"
  std::string key;         // key text, e.g. "198.18.0.7", "2001:db8:1::/64", "198.18.0.7:53", "*"
  uint64_t delta = 0;      // packets (or bytes) this node admitted since its last report
  uint64_t limit = 0;      // the cluster limit per window (rate amount)
  uint64_t window_ms = 0;  // the cluster window (rate period)
};

// A key the fleet has used up: it stays blocked on every node until `for_ms` has passed, when
// the sliding-window estimate falls back under the limit.
struct OverLimit {
  size_t index = 0;  // into the request's deltas
  uint64_t for_ms = 0;
  uint64_t estimate = 0;  // the fleet's weighted count for the key at the server's time
};

struct SyncReply {
  std::vector<OverLimit> over;
  // Deltas Redis did not apply: an error reply for their rule (e.g. OOM), or an invalid
  // KeyDelta. Everything else was applied, so the caller may keep only these pending, or drop
  // and log them; replaying the whole request would count the rest twice.
  std::vector<size_t> rejected;
  std::string rejected_reason;  // the first refusal, for the log
  // Deltas a store could not settle in this sync and that the caller replays: a Redis Cluster
  // master that failed mid-sync (they may have been applied, as after an error), a slot no
  // master serves yet (not applied). The rest of the sync went through.
  std::vector<size_t> retry;
  std::string retry_reason;  // the first, for the log
  // From a Redis Cluster master (RedisOptions::cluster_node) only: deltas whose slot it does
  // not serve, with where it sent them (MOVED, or ASK during a migration). Not applied.
  struct Redirected {
    bool ask = false;
    std::string host;  // empty: the replying node's own host
    int port = 0;
    std::vector<size_t> indices;
  };
  std::vector<Redirected> redirected;
  std::chrono::microseconds round_trip{0};
  uint64_t server_time_ms = 0;  // Redis TIME, the clock every node's windows follow
};

struct Peer {
  std::string node;
  uint64_t last_seen_ms = 0;  // server time
};

// How one Redis server of the store fares, for rlctl cluster status and the metrics.
struct ServerHealth {
  std::string addr;  // "10.0.0.5:6379"
  size_t slots = 0;  // of a Redis Cluster's 16,384 that it serves
  bool up = false;   // its last call got its replies
  uint64_t calls = 0;
  uint64_t errors = 0;                      // calls that failed on it
  uint64_t moved = 0;                       // MOVED replies it gave
  uint64_t ask = 0;                         // ASK replies it gave
  std::chrono::microseconds round_trip{0};  // its last sync's
};

// One sync fed delta by delta, so that the first deltas are on their way to Redis while the
// caller still reads the rest from the kernel. Replies index the deltas in the order added.
class SyncStream {
 public:
  virtual ~SyncStream() = default;
  virtual void add(KeyDelta d) = 0;
  // Everything added so far, in order; stable references.
  virtual const std::deque<KeyDelta>& deltas() const = 0;
  // No more deltas: sends every call without waiting for the replies, so that a caller with
  // several streams has them all on their way before it reads any. finish() still reads.
  virtual void flush() {}
  // Sends what is left and reads every reply: the same as Store::sync of deltas().
  virtual StoreResult<SyncReply> finish() = 0;
};

class Store {
 public:
  virtual ~Store() = default;
  // A sync whose deltas come one by one. No other call on the store until finish(). This one
  // collects them and calls sync(); a store that can send early does.
  virtual std::unique_ptr<SyncStream> begin_sync();
  // Adds the deltas and reports the keys over their limit, in one round trip. After an error
  // the deltas may or may not have been applied (a timeout can strike after Redis ran the
  // script): the caller replays them (PendingDeltas), which can count them twice but never
  // loses them.
  virtual StoreResult<SyncReply> sync(const std::vector<KeyDelta>& deltas) = 0;
  // Records this node as alive (cheap; rld calls it about once a second).
  virtual StoreStatus heartbeat(const std::string& node) = 0;
  // Nodes seen within `within`.
  virtual StoreResult<std::vector<Peer>> peers(std::chrono::milliseconds within) = 0;
  virtual bool connected() const = 0;
  // Which server the store talks to now ("redis 10.0.0.5:6379"), and how many times that changed
  // (a failover followed); stores that do not move report nothing.
  virtual std::string server() const { return ""; }
  virtual uint64_t servers_changed() const { return 0; }
  // Each server the store talks to (a Redis Cluster's masters); empty for one server.
  virtual std::vector<ServerHealth> servers() const { return {}; }
  // Tries the configured servers as a sync would, without counting anything: connects (TLS,
  // sentinels, a cluster's slot map), authenticates, loads the scripts and reads the fleet's
  // nodes key. The error names each server that failed and why. A store without servers
  // (in memory) has nothing to try.
  virtual StoreStatus check() { return StoreStatus::Ok(); }
};

// Store::begin_sync for stores that send everything at once.
class CollectingSyncStream final : public SyncStream {
 public:
  explicit CollectingSyncStream(Store& store) : store_(store) {}
  void add(KeyDelta d) override { deltas_.push_back(std::move(d)); }
  const std::deque<KeyDelta>& deltas() const override { return deltas_; }
  StoreResult<SyncReply> finish() override {
    return store_.sync(std::vector<KeyDelta>(deltas_.begin(), deltas_.end()));
  }

 private:
  Store& store_;
  std::deque<KeyDelta> deltas_;
};

inline std::unique_ptr<SyncStream> Store::begin_sync() {
  return std::make_unique<CollectingSyncStream>(*this);
}

}  // namespace rl::cluster
