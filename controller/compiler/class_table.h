// SPDX-License-Identifier: GPL-2.0-only
// Interning of rule bitmaps into class ids, shared by the source and port passes: packets whose
// dimension selects the same set of rules share one bitmap in the data path.
#pragma once

#include <iterator>
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

// Fills a table of `size` classes indexed by a field's value (a port, a length, a byte). The
// rules admitted are constant between two consecutive `bounds` (which include 0 and `size`), so
// `admits(pos, value)` is asked once per interval and rule, not once per value.
template <typename Admits>
Status fill_classes(const std::set<unsigned>& bounds, unsigned size, size_t rules,
                    ClassTable& table, std::vector<uint16_t>& cls, Admits admits) {
  cls.assign(size, 0);
  for (auto it = bounds.begin(); std::next(it) != bounds.end(); ++it) {
    unsigned lo = *it, hi = *std::next(it);
    RuleBitmap b{};
    for (size_t pos = 0; pos < rules; pos++)
      if (admits(pos, lo)) bitmap_set(b, pos);
    auto id = table.intern(b);
    if (!id) return id.error();
    for (unsigned i = lo; i < hi && i < size; i++) cls[i] = *id;
  }
  return {};
}

}  // namespace rl::compiler
