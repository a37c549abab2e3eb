// SPDX-License-Identifier: GPL-2.0-only
// The fleet-wide counter store on a Redis Cluster (docs/cluster.md, "Redis Cluster"). Each rule's
// keys are spread over kClusterSpread hashes whose hash tags sit evenly over the slots, so the
// rule's counts are shared out among the masters. A sync groups its deltas by the master that
// serves their hash's slot and sends every master its share at once: one pipelined round trip
// per master, all of them in flight together. MOVED refreshes the slot map and resends to the
// slot's master; ASK (a slot being migrated) resends to the importing master behind ASKING. A
// master that fails mid-sync gets its deltas back as SyncReply::retry while the others' count,
// and the slot map is asked for again until a replica has taken over.
//
// Not thread-safe: one caller (rld's cluster loop) owns a store.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/redis_store.h"
#include "cluster/slots.h"
#include "cluster/store.h"

namespace rl::cluster {

class ClusterStore final : public Store {
 public:
  using Clock = std::chrono::steady_clock;

  struct Stats {
    uint64_t slot_map_reads = 0;    // CLUSTER SLOTS asked and parsed
    uint64_t topology_changes = 0;  // a slot map unlike the one before
    uint64_t moved = 0;
    uint64_t ask = 0;
  };

  // Validates the options (opts.cluster_nodes: the seeds); the first call learns the slots.
  static StoreResult<std::unique_ptr<ClusterStore>> create(const RedisOptions& opts);
  ClusterStore(const ClusterStore&) = delete;
  ClusterStore& operator=(const ClusterStore&) = delete;

  StoreResult<SyncReply> sync(const std::vector<KeyDelta>& deltas) override;
  StoreStatus heartbeat(const std::string& node) override;
  StoreResult<std::vector<Peer>> peers(std::chrono::milliseconds within) override;
  bool connected() const override { return connected_; }
  std::string server() const override;
  uint64_t servers_changed() const override { return stats_.topology_changes; }
  std::vector<ServerHealth> servers() const override;
  // The slot map from the seeds, then every master's connection, then the nodes key's owner.
  StoreStatus check() override;

  const Stats& stats() const { return stats_; }
  const SlotMap& slot_map() const { return map_; }
  // Asks the cluster for its slots now: from the masters known, then the seeds.
  StoreStatus refresh_slots();

 private:
  struct Node {
    std::unique_ptr<RedisStore> store;
    ServerHealth health;
  };
  // Deltas bound for one master in one round, by their index in the request.
  struct Share {
    std::string host;
    int port = 0;
    std::vector<size_t> indices;
    bool ask = false;
  };

  ClusterStore(const RedisOptions& opts, std::shared_ptr<const TlsContext> tls);
  StoreResult<Node*> node(const std::string& host, int port);
  StoreStatus ensure_slots();
  // One round: every share sent, then every reply read. Deltas sent elsewhere come back in
  // `next` (MOVED: to the master named, the map read again after; ASK: to the master named,
  // behind ASKING). Returns how many masters answered.
  size_t run_round(const std::vector<KeyDelta>& deltas, std::map<std::string, Share>& shares,
                   SyncReply& out, std::map<std::string, Share>& next);
  void route(const std::vector<KeyDelta>& deltas, const std::vector<size_t>& indices,
             std::map<std::string, Share>& shares, SyncReply& out) const;
  // A call that only the master of `key`'s slot can answer, once more after a refresh when the
  // first try was redirected or failed.
  template <typename Call>
  auto on_slot_owner(const std::string& key, Call call) -> decltype(call(std::declval<Store&>()));

  RedisOptions opts_;                      // for the masters' stores
  std::shared_ptr<const TlsContext> tls_;  // every node's, made once; null for plain connections
  std::vector<Endpoint> seeds_;
  std::string nodes_key_;
  std::vector<uint16_t> bucket_slot_;  // spread bucket -> slot
  SlotMap map_;
  bool map_known_ = false;
  bool map_stale_ = false;
  std::map<std::string, Node> nodes_;  // by "host:port"
  Stats stats_;
  bool connected_ = false;
  static constexpr int kMaxRounds = 3;
};

}  // namespace rl::cluster
