// SPDX-License-Identifier: GPL-2.0-only
// Cluster rules' maps: what this node admitted per key (per CPU, summed here) and the keys the
// fleet has used up, which rld writes from Redis.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "datapath/datapath.h"
#include "datapath/map.h"

struct rl_xdp;

namespace rl {

class BpfClusterMaps final : public ClusterMaps {
 public:
  explicit BpfClusterMaps(const rl_xdp& skel);

  Result<std::vector<ClusterCount>> cluster_admitted() const;
  Status cluster_admitted_each(const std::function<void(const ClusterCount&)>& fn) const override;
  // One key (tests); the many-key form is one syscall (BPF_MAP_UPDATE_BATCH).
  Status cluster_set_over(const rl_key& key, uint64_t until_ns);
  Status cluster_set_over(const std::vector<std::pair<rl_key, uint64_t>>& until_ns) override;
  Result<uint64_t> cluster_prune_over(uint64_t now_ns) override;
  Status cluster_set_light(uint32_t stats_slot, const rl_cluster_light& light) override;

 private:
  MapRef<rl_key, uint64_t> admitted_;  // per CPU: read in batches
  MapRef<rl_key, rl_cluster_over> over_;
  MapRef<uint32_t, rl_cluster_light> light_;
};

}  // namespace rl
