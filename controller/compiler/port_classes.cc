// L4 index classes. Port lists are ranges, so the rule set is constant between range
// boundaries: the pass sweeps boundaries instead of evaluating all 65536 ports per rule.
#include <set>

#include "compiler/passes.h"

namespace rl::compiler {
namespace {

bool admits(const policy::Match& m, unsigned kind, unsigned index) {
  bool port_kind = kind == RL_PORT_KIND_TCP || kind == RL_PORT_KIND_UDP;
  if (!m.ports.empty()) {
    if (!port_kind) return false;
    for (const auto& r : m.ports)
      if (index >= r.first && index <= r.last) return true;
    return false;
  }
  if (!m.icmp_types.empty()) {
    if (port_kind || index > 255) return false;
    for (uint8_t t : m.icmp_types)
      if (t == index) return true;
    return false;
  }
  return true;
}

bool admits_source_port(const policy::Match& m, unsigned port) {
  if (m.source_ports.empty()) return true;
  for (const auto& r : m.source_ports)
    if (port >= r.first && port <= r.last) return true;
  return false;
}

}  // namespace

Status port_classes(const std::vector<const policy::Rule*>& rules, ClassTable& table,
                    CompiledRuleSet& out) {
  std::set<unsigned> bounds{0, 256, 65536}, source_bounds{0, 65536};
  rl_bitmap no_source_port{};
  for (size_t pos = 0; pos < rules.size(); pos++) {
    const policy::Match& m = rules[pos]->match;
    for (const auto& pr : m.ports) {
      bounds.insert(pr.first);
      bounds.insert(pr.last + 1u);
    }
    for (uint8_t t : m.icmp_types) {
      bounds.insert(t);
      bounds.insert(t + 1u);
    }
    for (const auto& pr : m.source_ports) {
      source_bounds.insert(pr.first);
      source_bounds.insert(pr.last + 1u);
    }
    if (m.source_ports.empty())
      bitmap_set(no_source_port, pos);
    else
      out.config.sport_used = 1;
  }
  for (unsigned kind = 0; kind < RL_PORT_KINDS; kind++) {
    auto s =
        fill_classes(bounds, 65536, rules.size(), table, out.port_classes[kind],
                     [&](size_t pos, unsigned i) { return admits(rules[pos]->match, kind, i); });
    if (!s) return s;
  }
  auto none = table.intern(no_source_port);
  if (!none) return none.error();
  out.config.sport_none = *none;
  // Without a source-port condition in the policy the data path never reads these tables.
  if (!out.config.sport_used) return {};
  for (unsigned t = RL_SPORT_TABLE; t < RL_PORT_TABLES; t++) {
    auto s = fill_classes(
        source_bounds, 65536, rules.size(), table, out.port_classes[t],
        [&](size_t pos, unsigned i) { return admits_source_port(rules[pos]->match, i); });
    if (!s) return s;
  }
  return {};
}

}  // namespace rl::compiler
