// SPDX-License-Identifier: GPL-2.0-only
// The compiler's passes over a policy whose rules are already in priority order.
#pragma once

#include <set>
#include <vector>

#include "compiler/class_table.h"
#include "compiler/compiled.h"
#include "policy/model.h"

namespace rl::compiler {

// Whether one of the ranges (ports, TTLs, codes, lengths) holds `v`.
inline bool in_ranges(const std::vector<policy::PortRange>& ranges, unsigned v) {
  for (const auto& r : ranges)
    if (v >= r.first && v <= r.last) return true;
  return false;
}

// The bounds where the rules a table admits may change: each range's first value and the one
// after its last, shifted by `offset`.
inline void add_bounds(std::set<unsigned>& bounds, const std::vector<policy::PortRange>& ranges,
                       unsigned offset = 0) {
  for (const auto& r : ranges) {
    bounds.insert(offset + r.first);
    bounds.insert(offset + r.last + 1u);
  }
}

// Protocol, packet-kind and no-port classes (the fixed class ids); RL_DIM_NEW_CONN when a rule
// requires a new connection, RL_DIM_FRAGMENT when one names a fragment class.
void fixed_classes(const std::vector<const policy::Rule*>& rules, CompiledRuleSet& out);

// One class id per (port kind, L4 index).
Status port_classes(const std::vector<const policy::Rule*>& rules, ClassTable& table,
                    CompiledRuleSet& out);

// Classes of the TCP flags, the TTL (rl_byte_classes) and the L3 length (rl_port_classes), and
// each field's "none" class.
Status field_classes(const std::vector<const policy::Rule*>& rules, ClassTable& table,
                     CompiledRuleSet& out);

// Flattened LPM entries: each prefix carries the rules its addresses satisfy and the
// allow/deny decision of the most specific list entry covering it.
// At most options.source_prefixes entries per family.
Status source_entries(const policy::Policy& policy, const std::vector<const policy::Rule*>& rules,
                      ClassTable& table, const CompileOptions& options, CompiledRuleSet& out);

// Flattened destination LPM entries, and each family's class for uncovered destinations.
Status destination_entries(const std::vector<const policy::Rule*>& rules, ClassTable& table,
                           CompiledRuleSet& out);

}  // namespace rl::compiler
