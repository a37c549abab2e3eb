// SPDX-License-Identifier: GPL-2.0-only
// Destination prefix flattening, as for sources (source_entries.cc) without the lists: each LPM
// entry carries the rules every prefix covering it admits. A family no rule names a destination
// of gets no entries at all, so its packets skip the lookup (rl_gen_config.dst_lpm); while no rule
// names any destination, packets skip the destination bitmap too (RL_DIM_DESTINATION).
#include <map>

#include "compiler/passes.h"

namespace rl::compiler {

Status destination_entries(const std::vector<const policy::Rule*>& rules, ClassTable& table,
                           CompiledRuleSet& out) {
  RuleBitmap wildcard{};
  std::map<Prefix, RuleBitmap> own;
  for (size_t pos = 0; pos < rules.size(); pos++) {
    const auto& dsts = rules[pos]->match.destinations;
    if (dsts.empty()) bitmap_set(wildcard, pos);
    for (const auto& p : dsts) bitmap_set(own[p], pos);
  }
  if (!own.empty()) out.config.dims_used |= RL_DIM_DESTINATION;
  auto any = table.intern(wildcard);
  if (!any) return any.error();
  out.config.dst_default[0] = out.config.dst_default[1] = *any;

  struct Frame {
    Prefix prefix;
    RuleBitmap rules;
    uint16_t cls;
  };
  size_t per_family[2] = {0, 0};
  std::vector<Frame> stack;
  for (const auto& [prefix, bits] : own) {
    while (!stack.empty() && !stack.back().prefix.contains(prefix)) stack.pop_back();
    RuleBitmap eff = bitmap_or(stack.empty() ? wildcard : stack.back().rules, bits);
    auto cls = table.intern(eff);
    if (!cls) return cls.error();
    size_t fam6 = prefix.addr.family == 6;
    if (prefix.len == 0) {
      out.config.dst_default[fam6] = *cls;  // ::/0 or 0.0.0.0/0 written as a destination
    } else if (stack.empty() || stack.back().cls != *cls) {
      out.destinations.push_back({prefix, rl_src_entry{*cls, 0}});
      out.config.dst_lpm[fam6] = 1;
      if (++per_family[fam6] > RL_MAX_DST_PREFIXES / RL_GENERATIONS)
        return Error{E2BIG, "more than " + std::to_string(RL_MAX_DST_PREFIXES / RL_GENERATIONS) +
                                " IPv" + std::to_string(prefix.addr.family) +
                                " destination prefixes"};
    }
    stack.push_back({prefix, eff, *cls});
  }
  // The trie answers only for covered addresses; the rest take the family's default, which the
  // data path reads from the config after a miss.
  return {};
}

}  // namespace rl::compiler
