// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/source_trie.h"

namespace rl {
namespace {

bool same(const rl_src_entry& a, const rl_src_entry& b) {
  return a.class_id == b.class_id && a.flags == b.flags;
}

// The entries covering the walk's current prefix, innermost last, with their answers.
struct Cover {
  Prefix prefix;
  rl_src_entry answer;
};

void climb(std::vector<Cover>& stack, const Prefix& p) {
  while (!stack.empty() && !stack.back().prefix.contains(p)) stack.pop_back();
}

}  // namespace

SourceTriePlan plan_source_trie(const std::vector<SourceTrieEntry>& current,
                                const std::vector<compiler::SourceEntry>& next, uint32_t next_gen,
                                const bool active_reads[2]) {
  const uint32_t b = next_gen & 1, a = b ^ 1;
  SourceTriePlan plan;
  // Both lists in prefix order, walked together: a prefix comes before every prefix it
  // contains, so the stacks hold exactly the entries covering the prefix at hand.
  std::vector<Cover> held, wanted;
  size_t i = 0, j = 0;
  while (i < current.size() || j < next.size()) {
    const bool take_current =
        j == next.size() || (i < current.size() && current[i].prefix <= next[j].prefix);
    const bool take_next =
        i == current.size() || (j < next.size() && next[j].prefix <= current[i].prefix);
    const Prefix& p = take_current ? current[i].prefix : next[j].prefix;
    climb(held, p);
    climb(wanted, p);
    const rl_src_entry answer =
        take_next ? next[j].value : (wanted.empty() ? rl_src_entry{} : wanted.back().answer);
    SourceTrieEntry e{p, {}};
    if (!active_reads[p.addr.family == 6]) {
      e.value.gen[a] = e.value.gen[b] = answer;
      if (!take_current || !same(current[i].value.gen[a], answer) ||
          !same(current[i].value.gen[b], answer))
        plan.before.push_back(e);
    } else if (take_current) {
      e.value = current[i].value;
      if (!same(e.value.gen[b], answer)) {
        e.value.gen[b] = answer;
        plan.before.push_back(e);
      }
    } else {
      e.value.gen[a] = held.empty() ? rl_src_entry{} : held.back().answer;
      e.value.gen[b] = answer;
      plan.before.push_back(e);
    }
    if (!take_next)
      plan.remove.push_back(p);
    else if (!same(e.value.gen[a], answer))
      plan.after.push_back({p, {{answer, answer}}});
    held.push_back({p, e.value.gen[a]});
    if (take_next) wanted.push_back({p, answer});
    i += take_current;
    j += take_next;
  }
  return plan;
}

std::vector<SourceTrieEntry> settled_source_trie(const std::vector<compiler::SourceEntry>& next) {
  std::vector<SourceTrieEntry> out;
  out.reserve(next.size());
  for (const auto& e : next) out.push_back({e.prefix, {{e.value, e.value}}});
  return out;
}

}  // namespace rl
