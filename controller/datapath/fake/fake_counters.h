// SPDX-License-Identifier: GPL-2.0-only
// Counters in memory for unit tests: whatever the test sets, zero otherwise.
#pragma once

#include <map>

#include "datapath/datapath.h"

namespace rl::testing {

class FakeCounters : public virtual Counters {
 public:
  Result<GlobalCounters> global_counters() const override { return global; }
  Result<rl_rule_counters> rule_counters(uint32_t slot) const override {
    auto it = rules.find(slot);
    return it == rules.end() ? rl_rule_counters{} : it->second;
  }
  Result<LimitCounters> limit_counters(uint32_t slot) const override {
    auto it = limits.find(slot);
    return it == limits.end() ? LimitCounters{} : it->second;
  }

  GlobalCounters global{};
  std::map<uint32_t, rl_rule_counters> rules;  // by stats slot
  std::map<uint32_t, LimitCounters> limits;    // by stats slot
};

}  // namespace rl::testing
