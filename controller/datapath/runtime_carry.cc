// SPDX-License-Identifier: GPL-2.0-only
// The operators' runtime entries outlive a layout change: read from the replaced data path's maps
// and written into this one's before any interface runs it, so no packet meets the new program
// without them. The old maps are read as this build's own, which is right only for the layouts
// whose runtime maps are this one's (compat.h, kRuntimeLayoutSinceAbi), each map's shape checked
// as well. Expired entries are left behind; the others keep their expiry (CLOCK_MONOTONIC, which
// pins do not outlive).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "datapath/bpf_runtime_lists.h"
#include "datapath/compat.h"
#include "datapath/loader.h"
#include "datapath/pins.h"
#include "datapath/runtime_maps.h"
#include "rl_xdp.skel.h"

namespace rl {
namespace {

// The runtime maps of the data path this one replaces, pinned under `root`, each opened only if
// its shape is this build's map's.
class ReplacedRuntimeMaps {
 public:
  explicit ReplacedRuntimeMaps(std::string root) : root_(std::move(root)) {}

  template <typename K>
  Status list(const bpf_map* hosts, const bpf_map* trie, uint8_t family,
              std::vector<RuntimeEntry>& out) {
    auto h = open(hosts);
    if (!h) return h.error();
    auto t = open(trie);
    if (!t) return t.error();
    runtime::Maps<K> m(MapRef<K, rl_runtime_entry>(h->get(), bpf_map__name(hosts)),
                       MapRef<K, rl_runtime_entry>(t->get(), bpf_map__name(trie)));
    return runtime::list(m, family, out);
  }

  // The host table's entries, read from a copy of its sets.
  Status list_hosts(const bpf_map* v4, const bpf_map* v6, std::vector<RuntimeEntry>& out) {
    auto sets4 = copy_sets<rl_host_set4>(v4);
    if (!sets4) return sets4.error();
    auto sets6 = copy_sets<rl_host_set6>(v6);
    if (!sets6) return sets6.error();
    HostTable(*sets4, *sets6, 0).each([&](const RuntimeEntry& e) { out.push_back(e); });
    return {};
  }

 private:
  Result<UniqueFd> open(const bpf_map* like) { return open_replaced_map(root_, like); }

  template <typename Set>
  Result<std::vector<Set>> copy_sets(const bpf_map* like) {
    auto fd = open(like);
    if (!fd) return fd.error();
    std::vector<Set> sets(bpf_map__max_entries(like));
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t len = (sets.size() * sizeof(Set) + page - 1) & ~(page - 1);
    void* p = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd->get(), 0);
    if (p == MAP_FAILED)
      return errno_error("mmap the replaced data path's " + std::string(bpf_map__name(like)));
    MmapRegion region(p, len);
    std::memcpy(sets.data(), p, sets.size() * sizeof(Set));
    return sets;
  }

  std::string root_;
};

// Every runtime entry of the replaced data path; EPROTO when its maps cannot be read as ours.
Status replaced_entries(const rl_xdp& skel, const std::string& root,
                        std::vector<RuntimeEntry>& entries) {
  ReplacedRuntimeMaps old(root);
  Status s =
      old.list<rl_runtime_lpm4_key>(skel.maps.rl_host_acl_v4, skel.maps.rl_runtime_v4, 4, entries);
  if (s)
    s = old.list<rl_runtime_lpm6_key>(skel.maps.rl_host_acl_v6, skel.maps.rl_runtime_v6, 6,
                                      entries);
  if (s) s = old.list_hosts(skel.maps.rl_hosts_v4, skel.maps.rl_hosts_v6, entries);
  return s;
}

}  // namespace

Status BpfRuntimeLists::carry_from(const std::string& root, uint32_t old_abi, uint64_t now_ns) {
  if (std::string why = compat::runtime_layout_unreadable(old_abi); !why.empty()) {
    carry_error_ = why;
    return {};
  }
  std::vector<RuntimeEntry> entries;
  if (Status s = replaced_entries(*skel_, root, entries); !s) {
    if (s.error().err != EPROTO) return s.error().wrap("read the replaced runtime entries");
    carry_error_ = s.error().message;
    return {};
  }
  std::erase_if(entries,
                [now_ns](const RuntimeEntry& e) { return e.expires_ns && e.expires_ns <= now_ns; });
  // Shortest prefixes first: the runtime filter then never has to lower its length and rebuild.
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const RuntimeEntry& a, const RuntimeEntry& b) { return a.prefix.len < b.prefix.len; });
  for (const auto& e : entries)
    if (Status put = runtime_acl_set(e.prefix, e.flags, e.expires_ns); !put)
      return put.error().wrap("carry the runtime entry " + e.prefix.str());
  carried_ = entries.size();
  return {};
}

}  // namespace rl
