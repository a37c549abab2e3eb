// SPDX-License-Identifier: GPL-2.0-only
// The rule set's maps, two generations of each: rules, stacked limits, new-source budgets and
// their names (rl_rule_meta), the class bitmaps and tables, the source filter, the source and
// destination tries and the generation's config; and the switch between generations.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/fd.h"
#include "datapath/bpf_counters.h"
#include "datapath/bpf_source_tries.h"
#include "datapath/datapath.h"
#include "datapath/map.h"

struct rl_xdp;

namespace rl {

class BpfRuleTables final : public RuleSets {
 public:
  // `control` is the mmapped rl_control (the epoch and the next rule id); `counters` resets the
  // counters of new stats slots. SYN cookie rules are refused without `syn_cookies`.
  static Result<std::unique_ptr<BpfRuleTables>> open(const rl_xdp& skel, rl_control* control,
                                                     const BpfCounters& counters, bool syn_cookies);

  Status apply(const compiler::CompiledRuleSet& rules) override;
  uint32_t active_generation() const override;
  // Source trie entries as last written, both families (the kernel's memory for them).
  size_t source_entries() const { return sources_.entries(); }
  // Read back from the generation in force (rl_rules), named from rl_rule_meta by stats slot.
  Result<std::vector<std::pair<std::string, rl_rule>>> active_rules() const override;
  // The identities of the rule set in force, read back from the kernel (rl_rules, rl_rule_meta),
  // so that a restarted rld keeps unchanged rules' state.
  Result<compiler::RuleIds> rule_ids() const;

 private:
  BpfRuleTables(const rl_xdp& skel, rl_control* control, const BpfCounters& counters,
                bool syn_cookies);
  // rl_control.active_gen: the rule set's epoch, whose low bit is the generation in force.
  uint32_t epoch() const;
  Status clear_generation(uint32_t gen) const;
  // Generation `gen`'s rules, stacked limits, budgets and names.
  Status write_rules(const compiler::CompiledRuleSet& rs, uint32_t gen) const;
  // Generation `gen`'s bitmaps, class tables and source filter (mmapped).
  void write_tables(const compiler::CompiledRuleSet& rs, uint32_t gen);

  const rl_xdp* skel_;
  rl_control* control_;
  const BpfCounters* counters_;
  bool syn_cookies_;
  uint32_t max_rules_;  // per generation, as the loader sized the maps (rld.yaml max_rules)
  MapRef<uint32_t, rl_gen_config> gen_config_;
  MapRef<uint32_t, rl_rule> rules_;
  MapRef<uint32_t, rl_rule> budgets_;  // rl_new_sources
  MapRef<uint32_t, rl_rule> stacked_;  // rl_limits
  MapRef<uint32_t, rl_rule_meta> meta_;
  MmapRegion bitmaps_;
  MmapRegion ports_;   // rl_port_classes
  MmapRegion bytes_;   // rl_byte_classes
  MmapRegion filter_;  // rl_src_filter
  BpfSourceTries sources_;
  std::chrono::steady_clock::time_point last_switch_{};
};

}  // namespace rl
