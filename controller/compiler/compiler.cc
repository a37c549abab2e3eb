// SPDX-License-Identifier: GPL-2.0-only
// The compiler driver: rule order, identities, then the class passes.
#include "compiler/compiler.h"

#include <algorithm>
#include <set>

#include "compiler/passes.h"
#include "rl_layout.h"

namespace rl::compiler {
namespace {

// FNV-1a over the fields that define a key's state: when any of them changes, the old state
// means something else and the rule starts fresh.
// Stacked limits count too: a rule's limits share its identity (ids id, id + 1, ...).
uint64_t signature(const rl_rule& r, const rl_rule* more) {
  uint64_t h = 1469598103934665603ULL;
  for (uint32_t l = 0; l <= r.more_limits; l++) {
    const rl_rule& x = l == 0 ? r : more[l - 1];
    const uint64_t fields[] = {x.algo,       x.key_kind,    x.cost_unit, x.v4_prefix, x.v6_prefix,
                               x.cost_shift, x.interval_fp, x.burst_ns,  x.window_ns, x.limit};
    for (uint64_t f : fields)
      for (int i = 0; i < 8; i++) {
        h ^= (f >> (8 * i)) & 0xff;
        h *= 1099511628211ULL;
      }
  }
  return h;
}

Status assign_identities(const RuleIds& previous, uint32_t max_rules, CompiledRuleSet& out) {
  const uint32_t slots = rl_rule_ids(max_rules);
  uint32_t free_slot = 0;  // slots below it are taken: the search goes on from there
  std::set<uint32_t> used_slots;
  for (const auto& [name, ident] : previous.by_name) used_slots.insert(ident.stats_slot);
  out.ids.next_id = std::max<uint32_t>(previous.next_id, 1);
  for (size_t pos = 0; pos < out.rules.size(); pos++) {
    rl_rule& r = out.rules[pos];
    rl_rule* more = &out.more_limits[rl_stacked_index(static_cast<uint32_t>(pos), 0)];
    uint64_t sig = signature(r, more);
    RuleIdentity ident;
    auto it = previous.by_name.find(out.names[pos]);
    if (it != previous.by_name.end() && it->second.signature == sig) {
      ident = it->second;
    } else {
      // A new incarnation: new id (fresh keys), and a stats slot that neither the rule set
      // in force nor this one uses, so no counter is shared between two live rules.
      ident.id = out.ids.next_id;
      out.ids.next_id += 1 + r.more_limits;
      if (it != previous.by_name.end()) {
        ident.stats_slot = it->second.stats_slot;  // same rule name: counters continue
      } else {
        while (free_slot < slots && used_slots.count(free_slot)) free_slot++;
        if (free_slot == slots) return Error{E2BIG, "no free rule counter slot"};
        ident.stats_slot = free_slot;
        out.new_slots.push_back(free_slot);
      }
      ident.signature = sig;
    }
    used_slots.insert(ident.stats_slot);
    r.id = ident.id;
    r.stats_slot = ident.stats_slot;
    for (uint32_t l = 1; l <= r.more_limits; l++) {
      more[l - 1].id = ident.id + l;
      more[l - 1].stats_slot = ident.stats_slot;
    }
    out.ids.by_name[out.names[pos]] = ident;
  }
  return {};
}

}  // namespace

Result<CompiledRuleSet> compile(const policy::Policy& policy, const RuleIds& previous,
                                const CompileOptions& options) {
  if (policy.rules.size() > options.max_rules)
    return Error{E2BIG, "the policy has " + std::to_string(policy.rules.size()) +
                            " rules; the data path holds at most " +
                            std::to_string(options.max_rules) + " (rld.yaml max_rules)"};

  std::vector<const policy::Rule*> order;
  for (const auto& r : policy.rules) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->priority < b->priority; });

  CompiledRuleSet out;
  for (const auto* rule : order) {
    auto r = compile_limit(*rule, options);
    if (!r) return r.error();
    auto budget = compile_new_sources(*rule, options);
    if (!budget) return budget.error();
    if (rule->new_sources) {
      r->flags |= RL_RULE_F_NEW_SOURCES;
      // The budget is judged with the rule's clock: the precise one if either needs it.
      r->flags |= budget->flags & RL_RULE_F_PRECISE_CLOCK;
    }
    if (rule->more.size() > RL_MAX_LIMITS - 1)
      return Error{EINVAL, "rule '" + rule->name + "': at most " + std::to_string(RL_MAX_LIMITS) +
                               " limits"};
    out.more_limits.resize(out.more_limits.size() + RL_MAX_LIMITS - 1);
    rl_rule* more = &out.more_limits[rl_stacked_index(static_cast<uint32_t>(out.rules.size()), 0)];
    for (size_t i = 0; i < rule->more.size(); i++) {
      auto m = compile_stacked_limit(*rule, i, options);
      if (!m) return m.error();
      more[i] = *m;
      r->flags |= m->flags & RL_RULE_F_PRECISE_CLOCK;  // one clock per packet
    }
    r->more_limits = static_cast<uint8_t>(rule->more.size());
    out.rules.push_back(*r);
    out.new_sources.push_back(*budget);
    out.names.push_back(rule->name);
  }
  if (auto s = assign_identities(previous, options.max_rules, out); !s) return s.error();
  for (size_t pos = 0; pos < out.rules.size(); pos++)
    if (out.rules[pos].flags & RL_RULE_F_NEW_SOURCES) {
      // Budget keys carry the rule's id, so they start fresh exactly when the rule's keys do.
      out.new_sources[pos].id = out.rules[pos].id;
      out.new_sources[pos].stats_slot = out.rules[pos].stats_slot;
    }

  out.config.rule_count = static_cast<uint32_t>(out.rules.size());
  out.config.rule_words = static_cast<uint32_t>((out.rules.size() + 63) / 64);
  out.config.malformed_verdict =
      policy.malformed == policy::Verdict::kDrop ? RL_VERDICT_DROP : RL_VERDICT_PASS;

  ClassTable table(out.classes);
  fixed_classes(order, out);
  if (auto s = port_classes(order, table, out); !s) return s.error();
  if (auto s = field_classes(order, table, out); !s) return s.error();
  if (auto s = source_entries(policy, order, table, options, out); !s) return s.error();
  if (auto s = destination_entries(order, table, out); !s) return s.error();
  return out;
}

}  // namespace rl::compiler
