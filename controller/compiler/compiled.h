// SPDX-License-Identifier: GPL-2.0-only
// The compiler's output: everything one generation of the data path holds, as plain values.
// The datapath writes it into the inactive generation and switches; unit tests inspect it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/prefix.h"
#include "compiler/bitmap.h"
#include "rl_layout.h"

namespace rl::compiler {

// A rule's identity across reloads. The id seeds its keys' hashes, so a rule keeps its per-key
// state exactly as long as it keeps its id; stats_slot indexes its counters.
struct RuleIdentity {
  uint32_t id = 0;
  uint32_t stats_slot = 0;
  uint64_t signature = 0;  // of the limiter parameters: a change means fresh state
};

struct RuleIds {
  std::map<std::string, RuleIdentity> by_name;
  uint32_t next_id = 1;
};

struct CompileOptions {
  // Resolution of the kernel's coarse clock (clock_getres(CLOCK_MONOTONIC_COARSE)); rld passes
  // the running kernel's. The default is the coarsest common one, HZ=100.
  uint64_t coarse_clock_ns = 10'000'000;
  // Cluster rules: how many nodes share a limit and how many CPUs count locally, for the early
  // sync step (see cluster_share in limits.cc). rld passes live values.
  uint32_t cluster_nodes = 1;
  uint32_t cpus = 1;
  // Flattened source entries a family may hold (rld.yaml source_prefixes).
  uint32_t source_prefixes = RL_DEFAULT_SOURCE_PREFIXES;
  // Rules the data path holds per generation (rld.yaml max_rules).
  uint32_t max_rules = RL_DEFAULT_MAX_RULES;
};

struct SourceEntry {
  Prefix prefix;
  rl_src_entry value{};
};

struct CompiledRuleSet {
  rl_gen_config config{};
  std::vector<rl_rule> rules;        // by position (priority order)
  std::vector<rl_rule> new_sources;  // by position: budgets of rules with RL_RULE_F_NEW_SOURCES
  // Stacked limit i (1..more_limits) of the rule at a position at rl_stacked_index(position,
  // i - 1); zero elsewhere.
  std::vector<rl_rule> more_limits;
  std::vector<std::string> names;   // by position
  std::vector<RuleBitmap> classes;  // by class id; at least RL_CLASS_FIRST_DYNAMIC entries
  // RL_PORT_VALUES class ids per table: the L4 index per port kind, then TCP and UDP source ports
  // (empty when no rule names a source port), then the L3 length (empty when no rule names one).
  std::array<std::vector<uint16_t>, RL_PORT_TABLES> port_classes;
  // RL_BYTE_VALUES class ids per table of one-byte fields (RL_BYTE_TABLE_*), empty for a field no
  // rule names (its RL_DIM_* bit clear in config.dims_used).
  std::array<std::vector<uint16_t>, RL_BYTE_TABLES> byte_classes;
  std::vector<SourceEntry> sources;       // flattened LPM entries, both families
  std::vector<SourceEntry> destinations;  // flattened destination entries (flags 0), both families
  std::array<std::vector<uint64_t>, 2> source_filter;  // [fam6]: RL_FILTER_WORDS words
  RuleIds ids;                      // pass to the next compile to keep state across reloads
  std::vector<uint32_t> new_slots;  // stats slots first used by this rule set (counters reset)
};

}  // namespace rl::compiler
