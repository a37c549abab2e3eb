// Interning of rule bitmaps into class ids, shared by the source and port passes: packets whose
// dimension selects the same set of rules share one bitmap in the data path.
#pragma once

#include <map>
#include <vector>

#include "common/result.h"
#include "compiler/bitmap.h"

namespace rl::compiler {

class ClassTable {
 public:
  explicit ClassTable(std::vector<rl_bitmap>& classes) : classes_(classes) {
    classes_.resize(RL_CLASS_FIRST_DYNAMIC, rl_bitmap{});
  }
  Result<uint16_t> intern(const rl_bitmap& b) {
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
  std::vector<rl_bitmap>& classes_;
  std::map<rl_bitmap, uint16_t, BitmapLess> index_;
};

}  // namespace rl::compiler
