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

}  // namespace

Status port_classes(const std::vector<const policy::Rule*>& rules, ClassTable& table,
                    CompiledRuleSet& out) {
  std::set<unsigned> bounds{0, 256, 65536};
  for (const auto* r : rules) {
    for (const auto& pr : r->match.ports) {
      bounds.insert(pr.first);
      bounds.insert(pr.last + 1u);
    }
    for (uint8_t t : r->match.icmp_types) {
      bounds.insert(t);
      bounds.insert(t + 1u);
    }
  }
  for (unsigned kind = 0; kind < RL_PORT_KINDS; kind++) {
    auto& cls = out.port_classes[kind];
    cls.assign(65536, 0);
    for (auto it = bounds.begin(); std::next(it) != bounds.end(); ++it) {
      unsigned lo = *it, hi = *std::next(it);
      rl_bitmap b{};
      for (size_t pos = 0; pos < rules.size(); pos++)
        if (admits(rules[pos]->match, kind, lo)) bitmap_set(b, pos);
      auto id = table.intern(b);
      if (!id) return id.error();
      for (unsigned i = lo; i < hi; i++) cls[i] = *id;
    }
  }
  return {};
}

}  // namespace rl::compiler
