// SPDX-License-Identifier: GPL-2.0-only
// Where a Redis round trip happens: every sync interval (default 100 ms), or at once when the
// kernel reports a key racing through its share, rld drains what the kernel admitted for keys of
// cluster rules, sends the increases to Redis in one round trip, and writes the keys Redis
// reports over the fleet limit into the kernel, each with its own expiry. It runs on its own
// thread: a slow or dead Redis never stalls the event loop, rlctl or metrics, and no packet ever
// waits for it.
//
// Redis unreachable: the deltas are kept (bounded) and replayed when it is back. Rules with
// on_redis_failure: open keep their local limits only. Rules with on_redis_failure: closed fall
// back to limit/N per node (N: the nodes seen alive last), so the fleet as a whole stays at about
// its limit instead of refusing all traffic (see docs/cluster.md).
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cluster/light.h"
#include "cluster/pending.h"
#include "cluster/store.h"
#include "common/failure_log.h"
#include "common/mutex.h"
#include "datapath/datapath.h"
#include "policy/model.h"

namespace rl::cluster {

// What the sync needs of a cluster rule in force.
struct SyncRule {
  std::string name;
  rl_rule compiled{};
  policy::ClusterLimit limit;
};

struct ClusterConfig {
  std::string node;  // this node's name in Redis (default: host name)
  std::chrono::milliseconds interval{100};
  uint32_t nodes = 1;  // expected fleet size; the nodes seen in Redis count when more
  size_t max_pending_keys = PendingDeltas::kDefaultMaxKeys;
  std::string topology = "standalone";  // how Redis is deployed: standalone, sentinel, cluster
  // What the heartbeat's period (a second) is timed by: the steady clock, or the simulated time
  // of a driver that runs passes itself (run_pass), so that its nodes beat as often as real ones.
  std::function<std::chrono::steady_clock::time_point()> clock = std::chrono::steady_clock::now;
};

struct ClusterStats {
  bool redis_up = false;
  uint64_t syncs = 0;
  std::map<std::string, uint64_t> errors;  // by kind: connect, timeout, rejected, ...
  uint64_t keys_last_sync = 0;
  uint64_t keys_synced_total = 0;
  uint64_t pending_keys = 0;
  uint64_t pending_dropped = 0;
  uint64_t active_blocks = 0;
  uint64_t early_syncs = 0;
  // Whole passes (read the kernel, sync, write blocks), whether or not they had keys to send,
  // and how long the last one took.
  uint64_t passes = 0;
  double last_pass_seconds = 0;
  // Round trips, cumulative: counts per upper bound (kRttBuckets), their sum and number.
  std::vector<uint64_t> rtt_buckets;
  double rtt_sum_seconds = 0;
  uint64_t rtt_count = 0;
  std::chrono::system_clock::time_point last_ok{};
  // Why the last call to Redis failed ("" once one succeeds again): the operator's first
  // question when Redis shows down, e.g. a missing ACL permission named by Redis' NOPERM.
  std::string last_error;
  std::string topology;               // ClusterConfig::topology
  std::string server;                 // the Redis the store talks to (Store::server)
  uint64_t servers_changed = 0;       // failovers followed
  std::vector<ServerHealth> servers;  // a Redis Cluster's masters (Store::servers)
  std::vector<Peer> peers;
};

class ClusterSync {
 public:
  // The cluster rules in force (rules without a cluster limit are not synced).
  using RulesFn = std::function<std::vector<SyncRule>()>;

  ClusterSync(Datapath& dp, std::unique_ptr<Store> store, ClusterConfig cfg, RulesFn rules);
  ~ClusterSync();  // stops the thread
  ClusterSync(const ClusterSync&) = delete;
  ClusterSync& operator=(const ClusterSync&) = delete;

  void start();
  void wake();  // an early sync, requested by the kernel
  // One whole pass on the caller's thread, for a driver that keeps its own time (the fleet
  // harness, tests/cluster/fleet_bench.cc) instead of start().
  void run_pass() { sync_once(); }

  static constexpr double kRttBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                           0.05,   0.1,   0.25,   0.5,   1.0};

  ClusterStats stats() const;
  struct Blocked {
    std::string rule, key;
    uint64_t remaining_ms = 0;
  };
  std::vector<Blocked> blocked() const;

 private:
  struct Pass;
  void loop();
  // One pass, in its steps: the rules and the stream, what is pending, what the kernel
  // admitted, the round trip and what it says, the heartbeat, then expiries and figures.
  void sync_once();
  Pass begin_pass();
  void replay_pending(Pass& p);
  void read_kernel(Pass& p);
  uint64_t take_admitted(const ClusterCount& c, uint64_t pass, uint64_t step);
  static KeyDelta key_delta(const rl_key& key, const SyncRule& v, uint64_t d, uint64_t nodes,
                            const Light& light);
  // Each rule's light threshold and step for the fleet's size; the threshold into the kernel
  // when it changed.
  void set_light(Pass& p);
  void send(Pass& p);
  // Every delta of the pass, or only those at `only` (a store's SyncReply::retry).
  void keep_pending(const Pass& p, const std::vector<size_t>* only = nullptr);
  void write_over(const Pass& p, const SyncReply& reply);
  void record_sync(size_t keys, std::chrono::microseconds round_trip);
  void heartbeat_if_due();
  void end_pass(const Pass& p);
  // on_redis_failure: closed, for deltas[from..]: the ones this pass read from the kernel; with
  // `only`, for those of them it lists (the deltas a partial sync hands back).
  void fallback(const std::deque<KeyDelta>& deltas, size_t from,
                const std::vector<std::optional<rl_key>>& kernel_keys, uint64_t now_ns,
                const std::vector<size_t>* only = nullptr);
  void count_error(const std::string& kind);
  enum class Call { kSync, kHeartbeat };
  // A failed call to Redis: counted by its kind, kept for cluster status, logged by the call's
  // FailureLog (once when failures start, a summary a minute, once when they end).
  void store_failed(const StoreError& e, Call call);
  log::FailureLog& log_of(Call call) { return call == Call::kSync ? sync_log_ : heartbeat_log_; }

  Datapath& dp_;
  std::unique_ptr<Store> store_;
  ClusterConfig cfg_;
  RulesFn rules_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  Mutex wake_mu_;
  CondVar wake_cv_;
  bool woken_ GUARDED_BY(wake_mu_) = false;

  struct KeyHash {
    size_t operator()(const rl_key& k) const noexcept;
  };
  struct KeyEq {
    bool operator()(const rl_key& a, const rl_key& b) const noexcept;
  };
  struct Total {
    uint64_t admitted = 0;  // the kernel's total at the last read
    uint64_t sent = 0;      // the kernel's total when the key's count was last sent
    uint64_t pass = 0;      // the pass that read it
  };

  // Owned by the sync thread.
  PendingDeltas pending_;
  // Kernel key -> what the kernel had admitted at its last read, and when its count was last
  // sent. Updated in place: one lookup per key and pass, no allocation for a key already known.
  std::unordered_map<rl_key, Total, KeyHash, KeyEq> totals_;
  uint64_t pass_ = 0;
  std::map<uint32_t, rl_cluster_light> light_written_;  // by stats slot
  // "rule\0key text" -> kernel key, for deltas waiting in pending_ only: the usual sync sends
  // the keys it just read and knows theirs.
  std::unordered_map<std::string, rl_key> keys_;
  struct LocalWindow {
    uint64_t window = 0, count = 0;
  };
  std::unordered_map<std::string, LocalWindow> local_;  // closed fallback: per-key local windows
  std::optional<std::chrono::steady_clock::time_point> last_heartbeat_;  // by cfg_.clock
  std::optional<std::chrono::steady_clock::time_point> last_peers_;      // by cfg_.clock
  // A pass succeeds when every delta was applied: an error, refused or replayed deltas all
  // fail it, each by its kind.
  log::FailureLog sync_log_{"cluster sync"};
  log::FailureLog heartbeat_log_{"cluster heartbeat"};

  mutable Mutex mu_;
  ClusterStats stats_ GUARDED_BY(mu_);
  // "rule\0key" -> entry with its kernel expiry
  std::map<std::string, Blocked> blocked_ GUARDED_BY(mu_);
  std::map<std::string, uint64_t> blocked_until_ GUARDED_BY(mu_);
};

}  // namespace rl::cluster
