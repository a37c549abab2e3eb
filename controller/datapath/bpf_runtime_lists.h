// SPDX-License-Identifier: GPL-2.0-only
// Runtime allow/deny entries (rlctl allow/deny) in the kernel's maps: hosts in the host table
// (host_table.h, overflow in a hash), other prefixes in a trie, each family's count in
// rl_control, and the runtime filter (runtime_filter.h) that lets packets skip them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/fd.h"
#include "datapath/datapath.h"
#include "datapath/host_table.h"
#include "datapath/runtime_filter.h"

struct rl_xdp;

namespace rl {

class BpfRuntimeLists final : public RuntimeLists {
 public:
  // `control` is the mmapped rl_control (the families' counts), `seed` the key hash's secret,
  // which the host table's sets are placed by.
  static Result<std::unique_ptr<BpfRuntimeLists>> open(const rl_xdp& skel, rl_control* control,
                                                       uint64_t seed);

  Status runtime_acl_set(const Prefix& prefix, uint32_t flags, uint64_t expires_ns) override;
  Status runtime_acl_remove(const Prefix& prefix) override;
  Result<std::vector<RuntimeEntry>> runtime_acl_list() const override;
  Result<std::optional<RuntimeEntry>> runtime_acl_find(const Prefix& prefix) const override;

  // The counts and the filter, from one listing of the maps (pinned ones may hold entries).
  // Once, at load: each change after it moves the count itself and tells the filter.
  Status load();

  // The entries of the data path of ABI `old_abi` pinned under `root`, which this one replaces,
  // written into this one's before any interface runs it. Expired ones (at now_ns) are left
  // behind. Sets carried() or, for a layout whose runtime maps this build cannot read,
  // carry_error().
  Status carry_from(const std::string& root, uint32_t old_abi, uint64_t now_ns);
  size_t carried() const { return carried_; }
  const std::string& carry_error() const { return carry_error_; }

 private:
  BpfRuntimeLists(const rl_xdp& skel, rl_control* control) : skel_(&skel), control_(control) {}
  // fn(maps, count, key) with the runtime maps of the prefix's family (hosts' hash and trie), its
  // entry count in rl_control and the prefix as their key.
  template <typename Fn>
  auto family(const Prefix& prefix, Fn&& fn) const;
  // Every runtime entry's prefix, for the runtime filter's rebuilds.
  Result<std::vector<Prefix>> prefixes() const;

  const rl_xdp* skel_;
  rl_control* control_;
  MmapRegion filter_map_;  // rl_runtime_filter
  std::unique_ptr<RuntimeFilter> filter_;
  MmapRegion hosts_v4_, hosts_v6_;  // rl_hosts_v4/v6
  std::unique_ptr<HostTable> hosts_;
  size_t carried_ = 0;
  std::string carry_error_;
};

}  // namespace rl
