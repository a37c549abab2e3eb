// SPDX-License-Identifier: GPL-2.0-only
// RuleSets in memory for unit tests: keeps what was applied and flips the generation.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "datapath/datapath.h"

namespace rl::testing {

class FakeRuleSets : public virtual RuleSets {
 public:
  Status apply(const compiler::CompiledRuleSet& rs) override {
    if (fail_next) {
      fail_next = false;
      return Error{EIO, "injected failure"};
    }
    applied.push_back(rs);
    gen ^= 1;
    return {};
  }
  uint32_t active_generation() const override { return gen; }
  // The last rule set applied, as the data path would read it back.
  Result<std::vector<std::pair<std::string, rl_rule>>> active_rules() const override {
    std::vector<std::pair<std::string, rl_rule>> out;
    if (applied.empty()) return out;
    const auto& rs = applied.back();
    for (size_t i = 0; i < rs.rules.size() && i < rs.names.size(); i++)
      out.emplace_back(rs.names[i], rs.rules[i]);
    return out;
  }

  std::vector<compiler::CompiledRuleSet> applied;
  uint32_t gen = 0;
  bool fail_next = false;  // the next apply fails
};

}  // namespace rl::testing
