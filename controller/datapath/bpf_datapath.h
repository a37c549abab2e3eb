// SPDX-License-Identifier: GPL-2.0-only
// The kernel data path: owns the loaded rl_xdp skeleton (programs and maps) and writes rule
// sets into it with a generation switch.
#pragma once

#include <array>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/fd.h"
#include "datapath/datapath.h"
#include "datapath/host_table.h"
#include "datapath/key_sets.h"
#include "datapath/map.h"
#include "datapath/runtime_filter.h"

struct rl_xdp;  // generated skeleton

namespace rl {

struct LoadOptions {
  uint32_t key_capacity = RL_DEFAULT_KEY_CAPACITY;  // rounded up to a power of two
  // bpffs directory for the maps (see datapath/pins.h); empty: nothing is pinned. Maps already
  // pinned there are adopted with their state, and their key capacity wins over key_capacity.
  std::string pin_root;
  uint32_t cluster_keys = RL_CLUSTER_KEYS;  // keys of cluster rules counted between syncs
  bool trace_decisions = false;             // tests: record every decision (see last_decision)
  uint32_t bench_src_spread = 0;  // benchmarks: vary IPv6 sources over this many addresses
  // Sample 1 in 2^k packets of matched rules into rl_samples (bpf/lib/sample.h); 0: off.
  uint32_t traffic_sample_shift = 0;
  // SYN cookies when the kernel offers what they need; false loads the program as on a kernel
  // without it (tests).
  bool syn_cookies = true;
  // Packets use every set of the key table from the start, instead of 2^RL_KEY_SETS_MIN_LOG2
  // sets that rld doubles as keys arrive (grow_key_table).
  bool key_table_full = false;
};

struct SkeletonDeleter {
  void operator()(rl_xdp* s) const;
};

class BpfDatapath final : public Datapath {
 public:
  static Result<std::unique_ptr<BpfDatapath>> load(const LoadOptions& opts = {});
  BpfDatapath(const BpfDatapath&) = delete;
  BpfDatapath& operator=(const BpfDatapath&) = delete;

  Status apply(const compiler::CompiledRuleSet& rules) override;
  uint32_t active_generation() const override;
  // Read back from the generation in force (rl_rules), named from rl_rule_meta by stats slot.
  Result<std::vector<std::pair<std::string, rl_rule>>> active_rules() const override;
  Result<GlobalCounters> global_counters() const override;
  Result<rl_rule_counters> rule_counters(uint32_t stats_slot) const override;
  Result<LimitCounters> limit_counters(uint32_t stats_slot) const override;

  Status runtime_acl_set(const Prefix& prefix, uint32_t flags, uint64_t expires_ns) override;
  Status runtime_acl_remove(const Prefix& prefix) override;
  using RuntimeEntry = ::rl::RuntimeEntry;
  Result<std::vector<RuntimeEntry>> runtime_acl_list() const override;
  Result<std::optional<RuntimeEntry>> runtime_acl_find(const Prefix& prefix) const override;

  using ClusterCount = ::rl::ClusterCount;
  Result<std::vector<ClusterCount>> cluster_admitted() const;
  Status cluster_admitted_each(const std::function<void(const ClusterCount&)>& fn) const override;
  // One key (tests); the many-key form is one syscall (BPF_MAP_UPDATE_BATCH).
  Status cluster_set_over(const rl_key& key, uint64_t until_ns);
  Status cluster_set_over(const std::vector<std::pair<rl_key, uint64_t>>& until_ns) override;
  Result<uint64_t> cluster_prune_over(uint64_t now_ns) override;

  // Another key with the same set and 32-bit tag as the one asked for would be read and reset
  // too, as the data path would judge it by that slot.
  size_t reset_key(const rl_key& key) override;
  std::optional<rl_slot> read_key(const rl_key& key) const override;
  uint64_t key_hash(const rl_key& key) const override;
  uint64_t offender_drops(uint64_t hash) const override;
  // Slots holding a key and keys inside a block period, at `now_ns` (CLOCK_MONOTONIC). Exact up
  // to kUsageScanSets sets (the default table, 16 MiB, a few ms to read); a larger table is
  // sampled evenly over that many sets and scaled up, so `rlctl status` and a scrape stay
  // cheap whatever the capacity.
  static constexpr uint32_t kUsageScanSets = 1u << 18;
  // Scans the sets in use only.
  std::pair<uint64_t, uint64_t> key_table_usage(uint64_t now_ns) const;

  // Whether this kernel lets the program answer SYN cookies (see bpf/lib/syncookie.h); without
  // it apply() refuses syn_cookies rules.
  bool syn_cookies() const { return syn_cookies_; }
  // Whether load() found pinned maps and took them over (rules, keys and counters intact).
  bool adopted() const { return adopted_; }
  // Non-zero when load() found maps pinned by another data path ABI: this data path then has
  // fresh maps, and take_over_pins() replaces the old pins once every interface runs it.
  uint32_t replaced_abi() const { return replaced_abi_; }
  Status take_over_pins();
  // With replaced_abi(): the runtime entries load() carried over from the replaced data path,
  // and why they could not be (a layout whose runtime maps this build cannot read), or "".
  size_t carried_runtime_entries() const { return carried_runtime_; }
  const std::string& runtime_carry_error() const { return runtime_carry_error_; }
  // Unpins the maps load() pinned afresh (none when it adopted or replaced another layout): for a
  // start that failed before anything was attached, so that the next start does not adopt a
  // rule set nobody applied.
  Status unpin_fresh_maps();
  // The identities of the rule set in force, read back from the kernel (rl_rules, rl_rule_meta),
  // so that a restarted rld keeps unchanged rules' state.
  Result<compiler::RuleIds> rule_ids() const;

  // CLOCK_MONOTONIC as the data path reads it (bpf_ktime_get_ns), whatever this process's
  // time namespace; the test clock when one is set.
  uint64_t now_ns() const override;

  // One run of the data path's clock program: the precise clock (bpf_ktime_get_ns), the coarse
  // clock as packets read it (jiffies scaled, bpf/lib/clock.h), and the tick packets scale by
  // (0 if they call the kernel's coarse clock instead).
  struct ClockReading {
    uint64_t precise_ns = 0;
    uint64_t packet_ns = 0;
    uint64_t jiffies = 0;  // read on both sides of precise_ns, the same value
    bool jiffies_steady = false;
    uint64_t jiffy_ns = 0;
  };
  Result<ClockReading> read_clocks() const;
  // A coarse clock with a longer tick than this (HZ below 10) is not a jiffy: packets then call
  // the kernel's coarse clock.
  static constexpr uint64_t kMaxJiffyNs = 100'000'000;

  int prog_fd() const;
  int events_fd() const;   // rl_events ring buffer
  int samples_fd() const;  // rl_samples ring buffer (traffic samples)
  uint32_t traffic_sample_shift() const { return traffic_sample_shift_; }
  int keys_fd() const;                             // rl_keys key table
  uint32_t key_sets() const { return key_sets_; }  // its capacity, in sets
  // The sets packets use (rl_control.key_sets_active): from 2^RL_KEY_SETS_MIN_LOG2 (or the
  // capacity, if smaller) up to the capacity, raised by grow_key_table.
  uint32_t key_sets_active() const;
  // How many times a key's state word went down other than by time (bpf/lib/limiter.h's
  // rl_key_resets): reset_key's resets and the tokens budgets gave back. The CPUs' memos hold
  // refusals only under the count they read.
  uint32_t key_resets() const;
  // Grows the sets in use to suit `tracked` keys (key_sets_wanted); returns the sets added. One
  // thread at a time: rld calls it from the thread that counts the keys.
  Result<uint32_t> grow_key_table(uint64_t tracked);

  // Runs one frame through the program with BPF_PROG_TEST_RUN; returns the XDP action.
  // With repeat > 1 the kernel runs the same frame repeatedly and reports the mean time.
  struct RunResult {
    uint32_t action = 0;
    uint32_t duration_ns = 0;  // mean per run
  };
  // With `out`, also the frame as the program left it (rewritten, for XDP_TX).
  Result<RunResult> run(const std::vector<uint8_t>& frame, uint32_t repeat = 1,
                        std::vector<uint8_t>* out = nullptr) const;

  // Test hooks (meaningful only with LoadOptions::trace_decisions).
  void set_clock(uint64_t ns);
  rl_decision last_decision() const;

  // The key table as the kernel sees it (mmapped, read-only use).
  const rl_set* key_table() const { return keys_.as<const rl_set>(); }
  // Its summary, one line per RL_SUMMARY_SETS sets (mmapped, read-only use).
  const rl_set_summary* key_summary() const { return summary_.as<const rl_set_summary>(); }

 private:
  explicit BpfDatapath(rl_xdp* skel);
  Status init();
  Status calibrate_coarse_clock();
  Status clear_generation(uint32_t gen);
  // rl_control.active_gen: the rule set's epoch, whose low bit is the generation in force.
  uint32_t epoch() const;
  Status load_runtime_lists();
  Status carry_runtime_entries(uint32_t old_abi);
  // fn(maps, count, key) with the runtime maps of the prefix's family (hosts' hash and trie), its
  // entry count in rl_control and the prefix as their key.
  template <typename Fn>
  auto runtime_family(const Prefix& prefix, Fn&& fn) const;
  // Every runtime entry's prefix, for the runtime filter's rebuilds.
  Result<std::vector<Prefix>> runtime_prefixes() const;
  // The set a key with this hash is in, and the set it was in before the doubling under way
  // (the same set unless the key moves in it).
  std::array<uint32_t, 2> sets_of(uint64_t hash) const;

  std::unique_ptr<rl_xdp, SkeletonDeleter> skel_;
  MmapRegion control_;
  MmapRegion bitmaps_;
  MmapRegion ports_;
  MmapRegion bytes_;  // rl_byte_classes
  MmapRegion filter_;
  MmapRegion keys_;
  MmapRegion summary_;  // rl_key_summary
  MmapRegion offenders_;
  MmapRegion runtime_filter_map_;  // rl_runtime_filter
  std::unique_ptr<RuntimeFilter> runtime_filter_;
  MmapRegion hosts_v4_, hosts_v6_;  // rl_hosts_v4/v6
  std::unique_ptr<HostTable> hosts_;
  uint32_t key_sets_ = 0;
  uint32_t key_low_bits_ = RL_KEY_SETS_MIN_LOG2;  // rl_set_low_bits(key_sets_)
  std::unique_ptr<KeySetGrowth> growth_;
  uint32_t traffic_sample_shift_ = 0;
  uint64_t hash_seed_ = 0;  // the key hash's secret, kept in rl_control with the key table
  bool adopted_ = false;
  bool syn_cookies_ = false;
  uint32_t replaced_abi_ = 0;
  size_t carried_runtime_ = 0;
  std::string runtime_carry_error_;
  std::string pin_root_;
  std::chrono::steady_clock::time_point last_switch_{};
};

}  // namespace rl
