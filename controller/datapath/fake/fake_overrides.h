// SPDX-License-Identifier: GPL-2.0-only
// Overrides in memory for unit tests: one list of entries, found by limit id and exact prefix,
// bounded per family like the kernel's tries.
#pragma once

#include <algorithm>
#include <vector>

#include "datapath/datapath.h"

namespace rl::testing {

class FakeOverrides : public virtual Overrides {
 public:
  Status override_set(const OverrideEntry& e) override {
    for (auto& o : overrides)
      if (o.value.limit.id == e.value.limit.id && o.prefix == e.prefix) {
        o = e;
        return {};
      }
    auto same_family = [&](const OverrideEntry& o) {
      return o.prefix.addr.family == e.prefix.addr.family;
    };
    if (std::count_if(overrides.begin(), overrides.end(), same_family) >= max_per_family)
      return Error{ENOSPC, "update rl_override"};
    overrides.push_back(e);
    return {};
  }
  Result<bool> override_remove(uint32_t limit_id, const Prefix& p) override {
    return std::erase_if(overrides, [&](const OverrideEntry& o) {
             return o.value.limit.id == limit_id && o.prefix == p;
           }) > 0;
  }
  Result<std::vector<OverrideEntry>> override_list() const override { return overrides; }

  std::vector<OverrideEntry> overrides;
  long max_per_family = RL_OVERRIDES_MAX;
};

}  // namespace rl::testing
