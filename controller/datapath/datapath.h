// SPDX-License-Identifier: GPL-2.0-only
// The data path as rld's logic sees it: small interfaces, one per concern, so that each part of
// rld asks only for what it uses and its tests can hand it a fake (datapath/fake/). BpfDatapath
// implements them all on the kernel's maps, one component per interface (bpf_datapath.h).
//
//   RuleSets      the rule set in force and its generation switch       PolicyManager, metrics
//   Counters      global, per-rule and per-limit counters               stats, metrics
//   RuntimeLists  runtime allow/deny entries (rlctl allow/deny)         acl handlers
//   Overrides     another limit for a source prefix (rlctl override)    override handlers
//   KeyTable      one key's slot, its hash, its offender drops          unblock, key show
//   ClusterMaps   what cluster rules admitted, and keys over the fleet  ClusterSync
//   Connections   open connections per key of connection limits        ConnectionCounter
//   Clock         the data path's clock (CLOCK_MONOTONIC, ns)           everything that expires
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/prefix.h"
#include "common/result.h"
#include "compiler/compiled.h"
#include "rl_abi.h"

namespace rl {

using GlobalCounters = std::array<rl_counter, RL_GC_MAX>;
using LimitCounters = std::array<rl_counter, RL_MAX_LIMITS>;

class RuleSets {
 public:
  virtual ~RuleSets() = default;
  // Make `rules` the rule set in force, in one atomic step for packets.
  virtual Status apply(const compiler::CompiledRuleSet& rules) = 0;
  virtual uint32_t active_generation() const = 0;
  // The rules in force as the data path holds them, by position: each one's name and what
  // packets are judged by.
  virtual Result<std::vector<std::pair<std::string, rl_rule>>> active_rules() const = 0;
};

class Counters {
 public:
  virtual ~Counters() = default;
  virtual Result<GlobalCounters> global_counters() const = 0;
  virtual Result<rl_rule_counters> rule_counters(uint32_t stats_slot) const = 0;
  // Packets of a rule with stacked limits that each of its limits dropped (or monitored).
  virtual Result<LimitCounters> limit_counters(uint32_t stats_slot) const = 0;
};

struct RuntimeEntry {
  Prefix prefix;
  uint32_t flags = 0;       // RL_SRC_F_ALLOW or RL_SRC_F_DENY
  uint64_t expires_ns = 0;  // CLOCK_MONOTONIC; 0 for never
};

// Runtime allow/deny entries, outside the policy and its generations.
class RuntimeLists {
 public:
  virtual ~RuntimeLists() = default;
  virtual Status runtime_acl_set(const Prefix& prefix, uint32_t flags, uint64_t expires_ns) = 0;
  virtual Status runtime_acl_remove(const Prefix& prefix) = 0;
  virtual Result<std::vector<RuntimeEntry>> runtime_acl_list() const = 0;
  // The entry of exactly this prefix, expired or not, if there is one: a lookup or two, where
  // the list is a pass over every entry.
  virtual Result<std::optional<RuntimeEntry>> runtime_acl_find(const Prefix& prefix) const = 0;
};

// A runtime override as the kernel holds it: the source prefix, and value.limit the limit that
// judges it, whose id is the entry's key with the prefix (rl_abi.h, "Runtime overrides").
struct OverrideEntry {
  Prefix prefix;
  rl_override value{};
};

// Runtime overrides, outside the policy and its generations. rld is their only writer.
class Overrides {
 public:
  virtual ~Overrides() = default;
  // Inserts or replaces the entry of (value.limit.id, prefix); ENOSPC when its family holds
  // RL_OVERRIDES_MAX entries already.
  virtual Status override_set(const OverrideEntry& e) = 0;
  // Whether there was such an entry.
  virtual Result<bool> override_remove(uint32_t limit_id, const Prefix& prefix) = 0;
  virtual Result<std::vector<OverrideEntry>> override_list() const = 0;
};

class KeyTable {
 public:
  virtual ~KeyTable() = default;
  // Resets the key's slot, a block included (rlctl unblock). Returns how many slots.
  virtual size_t reset_key(const rl_key& key) = 0;
  // The slot holding the key (a copy), if any, found by set and tag as the data path finds it.
  virtual std::optional<rl_slot> read_key(const rl_key& key) const = 0;
  // The key's seeded hash, as the data path and the offender reports have it.
  virtual uint64_t key_hash(const rl_key& key) const = 0;
  // Drop count of the rl_offenders slot of a key hash.
  virtual uint64_t offender_drops(uint64_t hash) const = 0;
};

// Per key of a cluster rule, what this node admitted ever (summed over CPUs).
struct ClusterCount {
  rl_key key{};
  uint64_t admitted = 0;
};

class ClusterMaps {
 public:
  virtual ~ClusterMaps() = default;
  // Every count, handed over a batch at a time as the kernel returns them.
  virtual Status cluster_admitted_each(
      const std::function<void(const ClusterCount&)>& fn) const = 0;
  // Marks keys as over their fleet limit until the time given (CLOCK_MONOTONIC), in one call.
  virtual Status cluster_set_over(const std::vector<std::pair<rl_key, uint64_t>>& until_ns) = 0;
  // Removes entries that expired before now_ns; returns how many remain in force.
  virtual Result<uint64_t> cluster_prune_over(uint64_t now_ns) = 0;
  // A cluster rule's light stage (rl_cluster_sketch.h), at its stats slot.
  virtual Status cluster_set_light(uint32_t stats_slot, const rl_cluster_light& light) = 0;
};

// Connection limits (bpf/lib/connections.h): the SYNs the data path admitted, and the count of
// open connections per key it judges SYNs by, which rld alone writes.
class Connections {
 public:
  virtual ~Connections() = default;
  // The admitted SYN of this tuple, taken out of the map, if the data path left one.
  virtual Result<std::optional<rl_conn_syn>> take_admitted_syn(const rl_conn_tuple& t) = 0;
  // Sets the open connections of a key hash; 0 removes the key.
  virtual Status set_open_connections(uint64_t hash, uint32_t count) = 0;
  virtual Result<uint32_t> open_connections(uint64_t hash) const = 0;
  // Every key's count back to 0: what a starting count must begin from (a restarted rld adopts
  // the counts of connections it cannot follow).
  virtual Status clear_open_connections() = 0;
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual uint64_t now_ns() const = 0;
};

// The interfaces are virtual bases, so that an implementation may be composed of one part per
// interface (the fakes of datapath/fake/ are).
class Datapath : public virtual RuleSets,
                 public virtual Counters,
                 public virtual RuntimeLists,
                 public virtual Overrides,
                 public virtual KeyTable,
                 public virtual ClusterMaps,
                 public virtual Connections,
                 public virtual Clock {};

}  // namespace rl
