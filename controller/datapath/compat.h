// SPDX-License-Identifier: GPL-2.0-only
// What rld does for maps that another rld left pinned, other than its own layout's fresh state:
// every shim for the data paths of earlier builds, each with the ABI at which it goes away.
//
// Within one RL_ABI_VERSION, rld adopts pinned maps in place (loader.cc). Maps added, and fields
// given a meaning, without a version bump left pins of the same version in older forms; the shims
// marked "ABI 9" read those forms, and go away with the first layout after ABI 9 (a bump makes
// rld replace such pins instead of adopting them). The static_assert below fails in the build
// that bumps the version, so that they are removed then. The data path's own side of the
// runtime entries' length (bpf/lib/classify.h: a length of 0 is a /0's, or an older entry's) and
// of an older key state (bpf/lib/limiter.h) stay with the program.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "common/result.h"
#include "datapath/runtime_maps.h"
#include "rl_abi.h"

namespace rl::compat {

// The first ABI without the ABI 9 adoption shims below.
inline constexpr uint32_t kAbi9ShimsGoneAt = 10;
static_assert(RL_ABI_VERSION - RL_ABI_VERSION_BUMP < kAbi9ShimsGoneAt,
              "a new data path ABI: remove the ABI 9 shims of datapath/compat.h");

// ABI 9: a map missing from pins of this version is one this build added without a version
// bump; it is created fresh and the others adopted. Maps the loader sizes with the key table
// cannot be (their keys would have no summary).
inline bool pinned_map_may_be_absent(bool sized_by_keys) { return !sized_by_keys; }

// ABI 9: an rld before the host table (rl_hosts_v4/v6) kept host entries in the trie. Such an
// entry still applies; it leaves the trie when the host is set again (it then goes to the table)
// or removed. Whether one was there.
template <typename K>
Result<bool> erase_host_from_trie(const runtime::Maps<K>& m, uint32_t& count, const K& key) {
  return runtime::erase(m.trie, count, key);
}

// ABI 9: writes the entry's length into entries an rld before rl_runtime_entry.prefixlen left
// at 0, so that packets can look past them once expired and runtime::find can tell them apart.
template <typename K>
Status stamp_runtime_lengths(const runtime::Maps<K>& m) {
  std::vector<std::tuple<const MapRef<K, rl_runtime_entry>*, K, rl_runtime_entry>> stale;
  Status s = runtime::each(m, [&](const auto& map, const K& k, rl_runtime_entry e) {
    if (e.prefixlen == k.prefixlen) return;
    e.prefixlen = k.prefixlen;
    stale.emplace_back(&map, k, e);
  });
  if (!s) return s;
  for (const auto& [map, k, e] : stale)
    if (Status u = map->update(k, e, BPF_EXIST); !u && u.error().err != ENOENT) return u;
  return {};
}

// Across layouts: a replacing rld carries the runtime entries over from the pinned maps of the
// data path it replaces (runtime_lists.h, carry_from), reading them as its own maps. That is
// right for the layouts whose runtime maps (rl_runtime_v4/v6, rl_host_acl_v4/v6, rl_hosts_v4/v6,
// their keys, entries, sets and host words) are this one's: those from kRuntimeLayoutSinceAbi up
// to RL_ABI_VERSION. A change to any of them raises it to the new RL_ABI_VERSION (or teaches
// rld to read the older form); a map whose shape differs all the same is not read.
inline constexpr uint32_t kRuntimeLayoutSinceAbi = 9;

// Why the runtime maps of data path ABI `abi` cannot be read, or "".
std::string runtime_layout_unreadable(uint32_t abi);

// Across layouts, for good: rl_control's first words, abi_version among them, keep their place
// in every layout, so the version of a pinned data path of any layout can be read. Its value may
// be larger than this layout's (the kernel writes the whole value).
Result<rl_control> read_pinned_control(int fd, const std::string& name);

}  // namespace rl::compat
