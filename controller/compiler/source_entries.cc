// SPDX-License-Identifier: GPL-2.0-only
// Source prefix flattening. The LPM trie returns only the longest matching prefix, so each entry
// must already carry what every shorter prefix covering it contributes. Prefixes sorted by
// (address, length) come in pre-order (a prefix before everything it contains), and a stack
// of the current ancestors gives each entry its inherited rules and list decision.
#include <algorithm>
#include <map>
#include <utility>

#include "compiler/passes.h"
#include "compiler/source_filter.h"

namespace rl::compiler {
namespace {

// What an item gives its prefix: a set (by index into the sets rules use), or a list decision.
constexpr uint32_t kAllowTag = UINT32_MAX;
constexpr uint32_t kDenyTag = UINT32_MAX - 1;
constexpr uint32_t kAnyTag = UINT32_MAX - 2;  // each family's /0, so every address finds one

struct Item {
  Prefix prefix;
  uint32_t tag;
  auto operator<=>(const Item&) const = default;  // by prefix, then tag
};

struct Frame {
  Prefix prefix;
  uint16_t cls;   // the rules its addresses satisfy
  uint32_t list;  // RL_SRC_F_ALLOW / RL_SRC_F_DENY in force for them
  rl_src_entry value;
};

// The class of a prefix given its parent's class and the sets listing it. A set read from a
// file gives a million prefixes the same sets under the same parent, so the last answer is
// kept, and the others are remembered by (parent, sets).
class Classes {
 public:
  Classes(ClassTable& table, const std::vector<RuleBitmap>& classes,
          const std::vector<RuleBitmap>& set_rules, const RuleBitmap& wildcard)
      : table_(table), classes_(classes), set_rules_(set_rules), wildcard_(wildcard) {}

  // parent: a class id, or kNoParent for a /0.
  static constexpr uint32_t kNoParent = UINT32_MAX;
  Result<uint16_t> of(uint32_t parent, const std::vector<uint32_t>& sets) {
    if (sets.empty() && parent != kNoParent) return static_cast<uint16_t>(parent);
    if (have_last_ && parent == last_parent_ && sets == last_sets_) return last_;
    auto key = std::make_pair(parent, sets);
    auto it = known_.find(key);
    uint16_t cls;
    if (it != known_.end()) {
      cls = it->second;
    } else {
      RuleBitmap eff = parent == kNoParent ? wildcard_ : classes_[parent];
      for (uint32_t s : sets) eff = bitmap_or(eff, set_rules_[s]);
      auto id = table_.intern(eff);
      if (!id) return id.error();
      cls = *id;
      known_.emplace(std::move(key), cls);
    }
    have_last_ = true;
    last_parent_ = parent;
    last_sets_ = sets;
    last_ = cls;
    return cls;
  }

 private:
  ClassTable& table_;
  const std::vector<RuleBitmap>& classes_;
  const std::vector<RuleBitmap>& set_rules_;
  const RuleBitmap& wildcard_;
  std::map<std::pair<uint32_t, std::vector<uint32_t>>, uint16_t> known_;
  bool have_last_ = false;
  uint32_t last_parent_ = 0;
  std::vector<uint32_t> last_sets_;
  uint16_t last_ = 0;
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
                      ClassTable& table, const CompileOptions& options, CompiledRuleSet& out) {
  std::map<std::string, const policy::SourceSet*> sets;
  for (const auto& s : policy.sets) sets[s.name] = &s;

  // The rules of each set that rules name, and every prefix each gives.
  RuleBitmap wildcard{};
  std::map<std::string, uint32_t> set_index;
  std::vector<RuleBitmap> set_rules;
  for (size_t pos = 0; pos < rules.size(); pos++) {
    const auto& names = rules[pos]->match.sources;
    if (names.empty()) bitmap_set(wildcard, pos);
    for (const auto& name : names) {
      if (!sets.count(name))
        return Error{EINVAL,
                     "rule '" + rules[pos]->name + "' uses undefined source set '" + name + "'"};
      auto [it, added] = set_index.emplace(name, static_cast<uint32_t>(set_rules.size()));
      if (added) set_rules.emplace_back();
      bitmap_set(set_rules[it->second], pos);
    }
  }
  std::vector<Item> items;
  size_t total = policy.allow.size() + policy.deny.size() + 2;
  for (const auto& [name, idx] : set_index) total += sets[name]->prefixes.size();
  items.reserve(total);
  // Runs of items, each sorted on its own and then merged: a set read from a file is sorted
  // already, and merging its million prefixes costs a pass where sorting them cost a second.
  std::vector<size_t> runs = {0};
  auto run = [&](const std::vector<Prefix>& prefixes, uint32_t tag) {
    for (const auto& p : prefixes) items.push_back({p, tag});
    auto from = items.begin() + static_cast<std::ptrdiff_t>(runs.back());
    if (!std::is_sorted(from, items.end())) std::sort(from, items.end());
    runs.push_back(items.size());
  };
  for (const auto& [name, idx] : set_index) run(sets[name]->prefixes, idx);
  run(policy.allow, kAllowTag);
  run(policy.deny, kDenyTag);
  std::vector<Prefix> any(2);
  any[0].addr.family = 4;
  any[1].addr.family = 6;
  run(any, kAnyTag);
  for (size_t width = 1; width + 1 < runs.size(); width *= 2)
    for (size_t r = 0; r + width < runs.size() - 1; r += 2 * width) {
      auto at = [&](size_t k) {
        return items.begin() + static_cast<std::ptrdiff_t>(runs[std::min(k, runs.size() - 1)]);
      };
      std::inplace_merge(at(r), at(r + width), at(r + 2 * width));
    }

  out.sources.reserve(items.size());
  Classes classes(table, out.classes, set_rules, wildcard);
  size_t per_family[2] = {0, 0};
  std::vector<Frame> stack;
  std::vector<uint32_t> own;
  for (size_t i = 0; i < items.size();) {
    const Prefix prefix = items[i].prefix;
    own.clear();
    uint32_t list = 0;
    for (; i < items.size() && items[i].prefix == prefix; i++) {
      const uint32_t tag = items[i].tag;
      if (tag == kAllowTag)
        list |= RL_SRC_F_ALLOW;
      else if (tag == kDenyTag)
        list |= RL_SRC_F_DENY;
      else if (tag != kAnyTag && (own.empty() || own.back() != tag))
        own.push_back(tag);
    }
    if ((list & RL_SRC_F_ALLOW) && (list & RL_SRC_F_DENY))
      return Error{EINVAL, prefix.str() + " is in both the allow and the deny list"};
    while (!stack.empty() && !stack.back().prefix.contains(prefix)) stack.pop_back();
    auto cls = classes.of(stack.empty() ? Classes::kNoParent : stack.back().cls, own);
    if (!cls) return cls.error();
    if (!list && !stack.empty()) list = stack.back().list;
    rl_src_entry value{*cls, list};
    // An entry that decides exactly like its parent adds nothing to the trie.
    bool redundant = !stack.empty() && stack.back().value.class_id == value.class_id &&
                     stack.back().value.flags == value.flags;
    if (!redundant) {
      out.sources.push_back({prefix, value});
      const size_t fam6 = prefix.addr.family == 6;
      if (++per_family[fam6] > options.source_prefixes)
        return Error{E2BIG, "more than " + std::to_string(options.source_prefixes) + " IPv" +
                                std::to_string(prefix.addr.family) +
                                " source prefixes (rld.yaml source_prefixes)"};
    }
    stack.push_back({prefix, *cls, list, value});
  }
  items = {};
  build_filter(out);
  return {};
}

}  // namespace rl::compiler
