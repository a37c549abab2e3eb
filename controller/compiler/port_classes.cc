// SPDX-License-Identifier: GPL-2.0-only
// L4 index classes. Port lists are ranges, so the rule set is constant between range
// boundaries: the pass sweeps boundaries instead of evaluating every port (RL_PORT_VALUES) per
// rule.
#include <algorithm>
#include <set>

#include "compiler/passes.h"

namespace rl::compiler {
namespace {

// `index` is the destination port for TCP and UDP, type * 256 + code for ICMP and ICMPv6.
bool admits(const policy::Match& m, unsigned kind, unsigned index) {
  bool port_kind = kind == RL_PORT_KIND_TCP || kind == RL_PORT_KIND_UDP;
  if (!m.ports.empty()) return port_kind && in_ranges(m.ports, index);
  if (!m.icmp_types.empty()) {
    if (port_kind) return false;
    if (std::find(m.icmp_types.begin(), m.icmp_types.end(), rl_icmp_index_type(index)) ==
        m.icmp_types.end())
      return false;
    return m.icmp_codes.empty() || in_ranges(m.icmp_codes, rl_icmp_index_code(index));
  }
  return true;
}

bool admits_source_port(const policy::Match& m, unsigned port) {
  return m.source_ports.empty() || in_ranges(m.source_ports, port);
}

const std::vector<policy::PortRange> kAnyCode{{0, 255}};

}  // namespace

Status port_classes(const std::vector<const policy::Rule*>& rules, ClassTable& table,
                    CompiledRuleSet& out) {
  RuleBitmap no_source_port{};
  for (size_t pos = 0; pos < rules.size(); pos++) {
    if (rules[pos]->match.source_ports.empty())
      bitmap_set(no_source_port, pos);
    else
      out.config.sport_used = 1;
  }
  // Ports and ICMP type/code pairs index tables of their own, each with its own bounds.
  for (unsigned kind = 0; kind < RL_PORT_KINDS; kind++) {
    bool icmp = kind == RL_PORT_KIND_ICMP || kind == RL_PORT_KIND_ICMPV6;
    auto s = fill_classes(
        RL_PORT_VALUES, rules.size(), table, out.port_classes[kind],
        [&](size_t pos, unsigned i) { return admits(rules[pos]->match, kind, i); },
        [&](size_t pos, std::set<unsigned>& changes) {
          const policy::Match& m = rules[pos]->match;
          if (!icmp) return add_bounds(changes, m.ports);
          if (!m.ports.empty()) return;  // admits no ICMP index at all
          for (unsigned t : m.icmp_types)
            add_bounds(changes, m.icmp_codes.empty() ? kAnyCode : m.icmp_codes,
                       rl_icmp_index(t, 0));
        });
    if (!s) return s;
  }
  auto none = table.intern(no_source_port);
  if (!none) return none.error();
  out.config.sport_none = *none;
  // Without a source-port condition in the policy the data path never reads these tables.
  if (!out.config.sport_used) return {};
  for (unsigned t = RL_SPORT_TABLE; t < RL_SPORT_TABLE + 2; t++) {  // TCP, UDP
    auto s = fill_classes(
        RL_PORT_VALUES, rules.size(), table, out.port_classes[t],
        [&](size_t pos, unsigned i) { return admits_source_port(rules[pos]->match, i); },
        [&](size_t pos, std::set<unsigned>& changes) {
          add_bounds(changes, rules[pos]->match.source_ports);
        });
    if (!s) return s;
  }
  return {};
}

}  // namespace rl::compiler
