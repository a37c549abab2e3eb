// SPDX-License-Identifier: GPL-2.0-only
// Interning of rule bitmaps into class ids, shared by the source and port passes: packets whose
// dimension selects the same set of rules share one bitmap in the data path.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "common/result.h"
#include "compiler/bitmap.h"
#include "rl_abi.h"

namespace rl::compiler {

class ClassTable {
 public:
  explicit ClassTable(std::vector<RuleBitmap>& classes) : classes_(classes) {
    classes_.resize(RL_CLASS_FIRST_DYNAMIC, RuleBitmap{});
  }
  Result<uint16_t> intern(const RuleBitmap& b) {
    auto it = index_.find(b);
    if (it != index_.end()) return it->second;
    if (classes_.size() >= RL_MAX_CLASSES)
      return Error{E2BIG,
                   "policy needs more than " + std::to_string(RL_MAX_CLASSES) +
                       " distinct rule combinations; merge overlapping source sets or port lists"};
    uint16_t id = static_cast<uint16_t>(classes_.size());
    classes_.push_back(b);
    index_.emplace(b, id);
    return id;
  }

 private:
  std::vector<RuleBitmap>& classes_;
  std::map<RuleBitmap, uint16_t> index_;
};

// Fills a table of `size` classes indexed by a field's value (a port, a length, a byte).
// `changes(pos, set)` adds the values where the rule at `pos` may start or stop admitting one; the
// rules admitted are constant between two consecutive such values of all rules, and a rule's
// `admits(pos, value)` is asked again only at its own: a policy of thousands of rules with a port
// each costs each rule two questions, not one per interval.
template <typename Admits, typename Changes>
Status fill_classes(unsigned size, size_t rules, ClassTable& table, std::vector<uint16_t>& cls,
                    Admits admits, Changes changes) {
  std::map<unsigned, std::vector<size_t>> at;  // value -> rules that may change there
  std::set<unsigned> mine;
  for (size_t pos = 0; pos < rules; pos++) {
    mine.clear();
    changes(pos, mine);
    for (unsigned v : mine)
      if (v > 0 && v < size) at[v].push_back(pos);
  }
  at.emplace(size, std::vector<size_t>{});  // the end of the last interval
  cls.assign(size, 0);
  RuleBitmap b;
  for (size_t pos = 0; pos < rules; pos++)
    if (admits(pos, 0)) bitmap_set(b, pos);
  unsigned lo = 0;
  for (const auto& [hi, changing] : at) {
    auto id = table.intern(b);
    if (!id) return id.error();
    std::fill(cls.begin() + lo, cls.begin() + hi, *id);
    for (size_t pos : changing) {
      if (admits(pos, hi))
        bitmap_set(b, pos);
      else
        bitmap_clear(b, pos);
    }
    lo = hi;
  }
  return {};
}

}  // namespace rl::compiler
