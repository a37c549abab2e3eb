// SPDX-License-Identifier: GPL-2.0-only
// ClusterMaps in memory for unit tests: admitted counts the test sets, keys over by their bytes.
#pragma once

#include <functional>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include "datapath/datapath.h"
#include "datapath/fake/fake_key_table.h"

namespace rl::testing {

class FakeClusterMaps : public virtual ClusterMaps {
 public:
  Status cluster_admitted_each(const std::function<void(const ClusterCount&)>& fn) const override {
    for (const auto& c : admitted) fn(c);
    return {};
  }
  Status cluster_set_over(const std::vector<std::pair<rl_key, uint64_t>>& until) override {
    for (const auto& [k, t] : until) over[key_bytes(k)] = t;
    return {};
  }
  Result<uint64_t> cluster_prune_over(uint64_t now) override {
    for (auto it = over.begin(); it != over.end();)
      it = it->second <= now ? over.erase(it) : std::next(it);
    return over.size();
  }
  Status cluster_set_light(uint32_t stats_slot, const rl_cluster_light& l) override {
    light[stats_slot] = l;
    return {};
  }

  std::vector<ClusterCount> admitted;
  std::map<std::vector<uint8_t>, uint64_t> over;  // by key bytes: until when
  std::map<uint32_t, rl_cluster_light> light;     // by stats slot
};

}  // namespace rl::testing
