// SPDX-License-Identifier: GPL-2.0-only
// The kernel data path: the loaded rl_xdp skeleton (loader.h) and one component per family of its
// maps, each behind its interface of datapath.h: the rule tables (bpf_rule_tables.h), the
// counters and events (bpf_counters.h), the runtime lists (bpf_runtime_lists.h), the key table
// (bpf_key_table.h), the cluster maps (bpf_cluster_maps.h), the connection counts
// (bpf_connections.h), the runtime overrides (bpf_overrides.h) and the clock (bpf_clock.h). Tests
// drive the program through DatapathTestHooks (test_hooks.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/fd.h"
#include "datapath/bpf_clock.h"
#include "datapath/bpf_cluster_maps.h"
#include "datapath/bpf_connections.h"
#include "datapath/bpf_counters.h"
#include "datapath/bpf_key_table.h"
#include "datapath/bpf_overrides.h"
#include "datapath/bpf_rule_tables.h"
#include "datapath/bpf_runtime_lists.h"
#include "datapath/datapath.h"
#include "datapath/loader.h"

namespace rl {

class BpfDatapath final : public Datapath {
 public:
  static Result<std::unique_ptr<BpfDatapath>> load(const LoadOptions& opts = {});
  BpfDatapath(const BpfDatapath&) = delete;
  BpfDatapath& operator=(const BpfDatapath&) = delete;
  ~BpfDatapath() override;

  // RuleSets (BpfRuleTables)
  Status apply(const compiler::CompiledRuleSet& rules) override { return rules_->apply(rules); }
  uint32_t active_generation() const override { return rules_->active_generation(); }
  Result<std::vector<std::pair<std::string, rl_rule>>> active_rules() const override {
    return rules_->active_rules();
  }
  Result<compiler::RuleIds> rule_ids() const { return rules_->rule_ids(); }

  // Counters (BpfCounters)
  Result<GlobalCounters> global_counters() const override { return counters_->global_counters(); }
  Result<rl_rule_counters> rule_counters(uint32_t stats_slot) const override {
    return counters_->rule_counters(stats_slot);
  }
  Result<LimitCounters> limit_counters(uint32_t stats_slot) const override {
    return counters_->limit_counters(stats_slot);
  }
  int events_fd() const { return counters_->events_fd(); }    // rl_events ring buffer
  int samples_fd() const { return counters_->samples_fd(); }  // rl_samples (traffic samples)
  uint32_t traffic_sample_shift() const { return traffic_sample_shift_; }

  // RuntimeLists (BpfRuntimeLists)
  using RuntimeEntry = ::rl::RuntimeEntry;
  Status runtime_acl_set(const Prefix& prefix, uint32_t flags, uint64_t expires_ns) override {
    return runtime_->runtime_acl_set(prefix, flags, expires_ns);
  }
  Status runtime_acl_remove(const Prefix& prefix) override {
    return runtime_->runtime_acl_remove(prefix);
  }
  Result<std::vector<RuntimeEntry>> runtime_acl_list() const override {
    return runtime_->runtime_acl_list();
  }
  Result<std::optional<RuntimeEntry>> runtime_acl_find(const Prefix& prefix) const override {
    return runtime_->runtime_acl_find(prefix);
  }

  // Overrides (BpfOverrides)
  Status override_set(const OverrideEntry& e) override { return overrides_->override_set(e); }
  Result<bool> override_remove(uint32_t limit_id, const Prefix& prefix) override {
    return overrides_->override_remove(limit_id, prefix);
  }
  Result<std::vector<OverrideEntry>> override_list() const override {
    return overrides_->override_list();
  }

  // ClusterMaps (BpfClusterMaps)
  using ClusterCount = ::rl::ClusterCount;
  Result<std::vector<ClusterCount>> cluster_admitted() const {
    return cluster_->cluster_admitted();
  }
  Status cluster_admitted_each(const std::function<void(const ClusterCount&)>& fn) const override {
    return cluster_->cluster_admitted_each(fn);
  }
  Status cluster_set_over(const rl_key& key, uint64_t until_ns) {
    return cluster_->cluster_set_over(key, until_ns);
  }
  Status cluster_set_over(const std::vector<std::pair<rl_key, uint64_t>>& until_ns) override {
    return cluster_->cluster_set_over(until_ns);
  }
  Result<uint64_t> cluster_prune_over(uint64_t now_ns) override {
    return cluster_->cluster_prune_over(now_ns);
  }
  Status cluster_set_light(uint32_t stats_slot, const rl_cluster_light& light) override {
    return cluster_->cluster_set_light(stats_slot, light);
  }

  // KeyTable (BpfKeyTable)
  size_t reset_key(const rl_key& key) override { return keys_->reset_key(key); }
  std::optional<rl_slot> read_key(const rl_key& key) const override { return keys_->read_key(key); }
  uint64_t key_hash(const rl_key& key) const override { return keys_->key_hash(key); }
  uint64_t offender_drops(uint64_t hash) const override { return keys_->offender_drops(hash); }
  static constexpr uint32_t kUsageScanSets = BpfKeyTable::kUsageScanSets;
  std::pair<uint64_t, uint64_t> key_table_usage(uint64_t now_ns) const {
    return keys_->usage(now_ns);
  }
  int keys_fd() const { return keys_->fd(); }          // rl_keys key table
  uint32_t key_sets() const { return keys_->sets(); }  // its capacity, in sets
  uint32_t key_sets_active() const { return keys_->sets_active(); }
  uint32_t key_resets() const { return keys_->resets(); }
  // One thread at a time: rld calls it from the thread that counts the keys.
  Result<uint32_t> grow_key_table(uint64_t tracked) { return keys_->grow(tracked); }
  // The key table as the kernel sees it (mmapped, read-only use), and its summary, one line per
  // RL_SUMMARY_SETS sets.
  const rl_set* key_table() const { return keys_->table(); }
  const rl_set_summary* key_summary() const { return keys_->summary(); }

  // Connections (BpfConnections)
  Result<std::optional<rl_conn_syn>> take_admitted_syn(const rl_conn_tuple& t) override {
    return connections_->take_admitted_syn(t);
  }
  Status set_open_connections(uint64_t hash, uint32_t count) override {
    return connections_->set_open_connections(hash, count);
  }
  Result<uint32_t> open_connections(uint64_t hash) const override {
    return connections_->open_connections(hash);
  }
  Status clear_open_connections() override { return connections_->clear_open_connections(); }

  // Clock (BpfClock)
  uint64_t now_ns() const override { return clock_->now_ns(); }
  using ClockReading = BpfClock::Reading;
  Result<ClockReading> read_clocks() const { return clock_->read(); }
  static constexpr uint64_t kMaxJiffyNs = BpfClock::kMaxJiffyNs;

  // Loading and pins (loader.h).
  int prog_fd() const;
  // Whether this kernel lets the program answer SYN cookies (see bpf/lib/syncookie.h); without
  // it apply() refuses syn_cookies rules.
  bool syn_cookies() const { return loaded_.syn_cookies; }
  // Whether load() found pinned maps and took them over (rules, keys and counters intact).
  bool adopted() const { return loaded_.adopted; }
  // Non-zero when load() found maps pinned by another data path ABI: this data path then has
  // fresh maps, and take_over_pins() replaces the old pins once every interface runs it.
  uint32_t replaced_abi() const { return loaded_.replaced_abi; }
  Status take_over_pins();
  // With replaced_abi(): the runtime entries load() carried over from the replaced data path,
  // and why they could not be (a layout whose runtime maps this build cannot read), or "".
  size_t carried_runtime_entries() const { return runtime_->carried(); }
  const std::string& runtime_carry_error() const { return runtime_->carry_error(); }
  // With replaced_abi(): the overrides of the replaced data path, to be compiled again against
  // the policy rld applies (their limit ids are the old policy's), and why they could not be read.
  const std::vector<OverrideEntry>& carried_overrides() const { return overrides_->carried(); }
  const std::string& override_carry_error() const { return overrides_->carry_error(); }
  // Unpins the maps load() pinned afresh (none when it adopted or replaced another layout): for a
  // start that failed before anything was attached, so that the next start does not adopt a
  // rule set nobody applied.
  Status unpin_fresh_maps();

 private:
  friend class DatapathTestHooks;
  explicit BpfDatapath(LoadedSkeleton loaded) : loaded_(std::move(loaded)) {}
  // The components over the loaded program's maps.
  Status init(const LoadOptions& opts);

  LoadedSkeleton loaded_;
  MmapRegion control_;  // rl_control, shared by the components
  std::unique_ptr<BpfCounters> counters_;
  std::unique_ptr<BpfRuleTables> rules_;
  std::unique_ptr<BpfRuntimeLists> runtime_;
  std::unique_ptr<BpfOverrides> overrides_;
  std::unique_ptr<BpfKeyTable> keys_;
  std::unique_ptr<BpfClusterMaps> cluster_;
  std::unique_ptr<BpfConnections> connections_;
  std::unique_ptr<BpfClock> clock_;
  uint32_t traffic_sample_shift_ = 0;
  std::string pin_root_;
};

}  // namespace rl
