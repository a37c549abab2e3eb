// SPDX-License-Identifier: GPL-2.0-only
// Source prefix flattening. The LPM trie returns only the longest matching prefix, so each entry
// must already carry what every shorter prefix covering it contributes. Prefixes sorted by
// (address, length) come in pre-order (a prefix before everything it contains), and a stack
// of the current ancestors gives each entry its inherited rules and list decision.
#include <map>

#include "compiler/passes.h"
#include "compiler/source_filter.h"

namespace rl::compiler {
namespace {

struct Attr {
  rl_bitmap own{};    // rules whose source sets list this exact prefix
  uint32_t list = 0;  // RL_SRC_F_ALLOW / RL_SRC_F_DENY given for this exact prefix
};

struct Frame {
  Prefix prefix;
  rl_bitmap rules;
  uint32_t list;
  rl_src_entry value;
};

// The /0 entries go to the generation's config, and the filter gets one bit per entry at the
// family's shortest other prefix length (see RL_FILTER_BITS_LOG2 in rl_abi.h).
void build_filter(CompiledRuleSet& out) {
  uint8_t min_len[2] = {0, 0};
  for (const auto& e : out.sources) {
    size_t fam6 = e.prefix.addr.family == 6;
    if (e.prefix.len == 0)
      out.config.defaults[fam6] = e.value;
    else if (!min_len[fam6] || e.prefix.len < min_len[fam6])
      min_len[fam6] = e.prefix.len;
  }
  for (size_t fam6 = 0; fam6 < 2; fam6++) {
    out.config.min_len[fam6] = min_len[fam6];
    out.source_filter[fam6].assign(RL_FILTER_WORDS, 0);
  }
  for (const auto& e : out.sources) {
    if (e.prefix.len == 0) continue;
    size_t fam6 = e.prefix.addr.family == 6;
    const uint32_t h = source_filter_hash(e.prefix.addr, min_len[fam6]);
    out.source_filter[fam6][h >> 6] |= 1ULL << (h & 63);
  }
}

}  // namespace

Status source_entries(const policy::Policy& policy, const std::vector<const policy::Rule*>& rules,
                      ClassTable& table, CompiledRuleSet& out) {
  std::map<std::string, const policy::SourceSet*> sets;
  for (const auto& s : policy.sets) sets[s.name] = &s;

  rl_bitmap wildcard{};
  std::map<Prefix, Attr> prefixes;
  for (size_t pos = 0; pos < rules.size(); pos++) {
    const auto& names = rules[pos]->match.sources;
    if (names.empty()) {
      bitmap_set(wildcard, pos);
      continue;
    }
    for (const auto& name : names) {
      auto it = sets.find(name);
      if (it == sets.end())
        return Error{EINVAL,
                     "rule '" + rules[pos]->name + "' uses undefined source set '" + name + "'"};
      for (const auto& p : it->second->prefixes) bitmap_set(prefixes[p].own, pos);
    }
  }
  for (const auto& p : policy.allow) prefixes[p].list |= RL_SRC_F_ALLOW;
  for (const auto& p : policy.deny) {
    if (prefixes[p].list & RL_SRC_F_ALLOW)
      return Error{EINVAL, p.str() + " is in both the allow and the deny list"};
    prefixes[p].list |= RL_SRC_F_DENY;
  }
  for (uint8_t family : {4, 6}) {
    Prefix any;
    any.addr.family = family;
    prefixes.try_emplace(any);  // every address finds an entry
  }

  size_t per_family[2] = {0, 0};
  std::vector<Frame> stack;
  for (const auto& [prefix, attr] : prefixes) {
    while (!stack.empty() && !stack.back().prefix.contains(prefix)) stack.pop_back();
    rl_bitmap inherited = stack.empty() ? wildcard : stack.back().rules;
    uint32_t list = attr.list ? attr.list : (stack.empty() ? 0 : stack.back().list);
    rl_bitmap eff = bitmap_or(inherited, attr.own);
    auto cls = table.intern(eff);
    if (!cls) return cls.error();
    rl_src_entry value{*cls, list};
    // An entry that decides exactly like its parent adds nothing to the trie.
    bool redundant = !stack.empty() && stack.back().value.class_id == value.class_id &&
                     stack.back().value.flags == value.flags;
    if (!redundant) {
      out.sources.push_back({prefix, value});
      if (++per_family[prefix.addr.family == 6] > RL_MAX_PREFIXES / RL_GENERATIONS)
        return Error{E2BIG, "more than " + std::to_string(RL_MAX_PREFIXES / RL_GENERATIONS) +
                                " IPv" + std::to_string(prefix.addr.family) + " prefixes"};
    }
    stack.push_back({prefix, eff, list, value});
  }
  build_filter(out);
  return {};
}

}  // namespace rl::compiler
