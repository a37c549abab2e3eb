// SPDX-License-Identifier: GPL-2.0-only
// What the metrics exporter shows, read from the kernel at scrape time. rld fills a Snapshot
// from its data path and policy state; tests fill one by hand.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "rl_abi.h"

namespace rl::metrics {

struct RuleSnapshot {
  std::string name;
  std::string action;  // "drop" or "monitor"
  rl_rule_counters counters{};
  // Rules with stacked limits: what each limit refused, by the limit's name.
  std::vector<std::pair<std::string, rl_counter>> limits;
};

struct InterfaceSnapshot {
  std::string name;
  std::string mode;  // "native" or "generic"
};

struct ClusterSnapshot {
  bool enabled = false;
  bool redis_up = false;
  uint64_t syncs = 0, early_syncs = 0;
  uint64_t keys_last_sync = 0, keys_synced_total = 0;
  uint64_t pending_keys = 0, pending_dropped = 0;
  uint64_t active_blocks = 0;
  uint64_t peers = 0;
  uint64_t servers_changed = 0;  // failovers followed (Sentinel), slot maps (Cluster)
  // A Redis Cluster's masters, as the store sees them; empty with one server.
  struct Server {
    std::string addr;
    uint64_t slots = 0;
    bool up = false;
    uint64_t errors = 0, moved = 0, ask = 0;
    double round_trip_seconds = 0;  // its last sync's
    // False while it holds none of this node's keys, so nothing was ever asked of it: whether
    // it is up is not known, and no up sample is exported (an alert on 0 must not fire for it).
    bool contacted = true;
  };
  std::vector<Server> servers;
  double last_pass_seconds = 0;            // the last whole pass: kernel read, sync, kernel writes
  std::map<std::string, uint64_t> errors;  // by kind
  std::vector<double> rtt_bounds;          // histogram upper bounds (seconds)
  std::vector<uint64_t> rtt_buckets;       // cumulative counts per bound
  double rtt_sum_seconds = 0;
  uint64_t rtt_count = 0;
};

// Connection limits' counting from conntrack's events (controller/daemon/connections).
struct ConnectionsSnapshot {
  uint64_t counted = 0;      // connections counted against a connection limit now
  uint64_t events_lost = 0;  // overruns of conntrack's event socket
  uint64_t errors = 0;       // events that could not be read or counted
};

// A source set of the policy in force.
struct SetSnapshot {
  std::string name;
  uint64_t prefixes = 0;
  double updated_seconds = 0;  // Unix time its prefixes last changed in force
};

struct Snapshot {
  std::vector<RuleSnapshot> rules;
  std::vector<SetSnapshot> sets;
  rl_counter global[RL_GC_MAX]{};  // enum rl_global_counter, summed over CPUs
  uint64_t keys_tracked = 0;       // key table slots holding a key
  uint64_t keys_capacity = 0;
  uint64_t keys_capacity_in_use = 0;  // slots of the sets in use (the table grows to capacity)
  uint64_t active_blocks = 0;         // keys inside a block period
  std::vector<InterfaceSnapshot> interfaces;
  uint64_t reloads_ok = 0;
  uint64_t reloads_failed = 0;
  double last_reload_success_seconds = 0;  // Unix time of the last good reload, 0 if none
  bool last_reload_ok = true;
  uint32_t generation = 0;  // rule set generation counter (increments per apply)
  // Readiness (/readyz): why rld does not enforce what it is configured to, one line each
  // (empty: ready), and what it enforces.
  std::vector<std::string> not_ready;
  bool degraded = false;  // enforcing a rule set adopted at start, its policy failed to load
  std::string ready_summary;
  uint64_t runtime_allow_entries = 0;
  uint64_t runtime_deny_entries = 0;
  std::map<std::string, uint64_t> overrides;  // runtime overrides (rlctl override) per rule
  ClusterSnapshot cluster;
  ConnectionsSnapshot connections;
};

// Called once per scrape; an error makes the scrape report rl_up 0 with no other data.
using SnapshotFn = std::function<Result<Snapshot>()>;

}  // namespace rl::metrics
