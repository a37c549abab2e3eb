// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/bpf_cluster_maps.h"

#include "rl_xdp.skel.h"

namespace rl {

BpfClusterMaps::BpfClusterMaps(const rl_xdp& skel)
    : admitted_(skel.maps.rl_cluster_admitted),
      over_(skel.maps.rl_cluster_over),
      light_(skel.maps.rl_cluster_light) {}

Result<std::vector<ClusterCount>> BpfClusterMaps::cluster_admitted() const {
  std::vector<ClusterCount> out;
  if (Status s = cluster_admitted_each([&](const ClusterCount& c) { out.push_back(c); }); !s)
    return s.error();
  return out;
}

Status BpfClusterMaps::cluster_admitted_each(
    const std::function<void(const ClusterCount&)>& fn) const {
  int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0) return Error{EINVAL, "cannot tell the number of CPUs"};
  return lookup_batches<rl_key, uint64_t>(admitted_.fd(), admitted_.name(), ncpus,
                                          [&](const rl_key& k, const uint64_t* per_cpu) {
                                            uint64_t sum = 0;
                                            for (int c = 0; c < ncpus; c++) sum += per_cpu[c];
                                            fn(ClusterCount{k, sum});
                                          });
}

Status BpfClusterMaps::cluster_set_over(const rl_key& key, uint64_t until_ns) {
  return over_.update(key, rl_cluster_over{until_ns});
}

Status BpfClusterMaps::cluster_set_over(const std::vector<std::pair<rl_key, uint64_t>>& until_ns) {
  if (until_ns.empty()) return {};
  std::vector<rl_key> keys;
  std::vector<rl_cluster_over> values;
  keys.reserve(until_ns.size());
  values.reserve(until_ns.size());
  for (const auto& [k, until] : until_ns) {
    keys.push_back(k);
    values.push_back(rl_cluster_over{until});
  }
  return over_.update(keys, values);
}

Result<uint64_t> BpfClusterMaps::cluster_prune_over(uint64_t now_ns) {
  // Every sync pass runs this: a batch read and a batch delete, not two syscalls per entry.
  auto entries = over_.entries();
  if (!entries) return entries.error();
  std::vector<rl_key> expired;
  for (const auto& [k, v] : *entries)
    if (v.until_ns <= now_ns) expired.push_back(k);
  if (Status s = over_.remove(expired); !s) {
    // An entry may have gone meanwhile (rlctl unblock): fall back to one at a time.
    for (const auto& k : expired)
      if (Status r = over_.remove(k); !r) return r.error();
  }
  return entries->size() - expired.size();
}

Status BpfClusterMaps::cluster_set_light(uint32_t stats_slot, const rl_cluster_light& light) {
  if (Status s = light_.update(stats_slot, light); !s)
    return s.error().wrap("stats slot " + std::to_string(stats_slot));
  return {};
}

}  // namespace rl
