// The data path as the policy logic sees it. rld and its tests are written against this
// interface; BpfDatapath is the kernel implementation, tests may inject a fake.
#pragma once

#include <array>
#include <cstdint>

#include "common/result.h"
#include "compiler/compiled.h"
#include "rl_abi.h"

namespace rl {

using GlobalCounters = std::array<rl_counter, RL_GC_MAX>;

class Datapath {
 public:
  virtual ~Datapath() = default;

  // Make `rules` the rule set in force, in one atomic step for packets.
  virtual Status apply(const compiler::CompiledRuleSet& rules) = 0;
  virtual uint32_t active_generation() const = 0;

  virtual Result<GlobalCounters> global_counters() const = 0;
  virtual Result<rl_rule_counters> rule_counters(uint32_t stats_slot) const = 0;
};

}  // namespace rl
