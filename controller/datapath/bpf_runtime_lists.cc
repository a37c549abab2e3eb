// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/bpf_runtime_lists.h"

#include <algorithm>
#include <atomic>
#include <span>

#include "datapath/key_sets.h"
#include "datapath/map.h"
#include "datapath/runtime_maps.h"
#include "rl_xdp.skel.h"

namespace rl {
namespace {

// Erases a host's entry from the family's hosts' hash, if the hash may hold any; packets stop
// asking a hash once it is empty.
template <typename K>
Result<bool> hash_erase(const runtime::Maps<K>& m, RuntimeFilter& filter, uint32_t fam6,
                        uint32_t& count, const K& key) {
  if (!filter.hash_may_hold(fam6)) return false;
  auto gone = runtime::erase(m.hosts, count, key);
  if (!gone || !*gone) return gone;
  auto empty = runtime::empty(m.hosts);
  if (!empty) return empty.error();
  if (*empty) filter.hash_emptied(fam6);
  return true;
}

// A host's entry goes to its set of the host table, or to the hosts' hash when the set has no
// way free. Once the table holds it, a copy in the hash (its set was full before) goes.
template <typename K>
Status host_put(HostTable& table, RuntimeFilter& filter, const runtime::Maps<K>& m, uint32_t& count,
                const Prefix& host, const K& key, const rl_runtime_entry& e) {
  const uint32_t fam6 = host.addr.family == 6;
  std::atomic_ref<uint32_t> n(count);
  n.fetch_add(1);  // up before the entry is in, as runtime::put counts
  auto put = table.put(host.addr, e.flags, e.expires_ns);
  if (put != HostTable::Put::kAdded) n.fetch_sub(1);
  if (put == HostTable::Put::kFull) {
    filter.hash_in_use(fam6);
    return runtime::put(m.hosts, count, key, e);
  }
  if (auto moved = hash_erase(m, filter, fam6, count, key); !moved) return moved.error();
  return {};
}

template <typename K>
Result<bool> host_erase(HostTable& table, RuntimeFilter& filter, const runtime::Maps<K>& m,
                        uint32_t& count, const Prefix& host, const K& key) {
  if (table.erase(host.addr)) {
    std::atomic_ref<uint32_t>(count).fetch_sub(1);
    return true;
  }
  return hash_erase(m, filter, host.addr.family == 6, count, key);
}

runtime::Maps<rl_runtime_lpm4_key> maps_v4(const rl_xdp& skel) {
  return {skel.maps.rl_host_acl_v4, skel.maps.rl_runtime_v4};
}
runtime::Maps<rl_runtime_lpm6_key> maps_v6(const rl_xdp& skel) {
  return {skel.maps.rl_host_acl_v6, skel.maps.rl_runtime_v6};
}

}  // namespace

Result<std::unique_ptr<BpfRuntimeLists>> BpfRuntimeLists::open(const rl_xdp& skel,
                                                               rl_control* control, uint64_t seed) {
  std::unique_ptr<BpfRuntimeLists> l(new BpfRuntimeLists(skel, control));
  if (Status s = mmap_arrays({{skel.maps.rl_runtime_filter, &l->filter_map_},
                              {skel.maps.rl_hosts_v4, &l->hosts_v4_},
                              {skel.maps.rl_hosts_v6, &l->hosts_v6_}});
      !s)
    return s.error();
  l->filter_ = std::make_unique<RuntimeFilter>(
      std::span<uint64_t>(l->filter_map_.as<uint64_t>(), RL_RUNTIME_FILTER_ENTRIES),
      rcu_grace_period);
  l->hosts_ = std::make_unique<HostTable>(
      std::span<rl_host_set4>(l->hosts_v4_.as<rl_host_set4>(), RL_HOST_SETS_V4),
      std::span<rl_host_set6>(l->hosts_v6_.as<rl_host_set6>(), RL_HOST_SETS_V6), seed);
  return l;
}

template <typename Fn>
auto BpfRuntimeLists::family(const Prefix& prefix, Fn&& fn) const {
  if (prefix.addr.family == 4)
    return fn(maps_v4(*skel_), control_->runtime_acl_v4, runtime::key4(prefix));
  return fn(maps_v6(*skel_), control_->runtime_acl_v6, runtime::key6(prefix));
}

Status BpfRuntimeLists::runtime_acl_set(const Prefix& prefix, uint32_t flags, uint64_t expires_ns) {
  rl_runtime_entry e{flags, prefix.len, expires_ns};
  // The filter first: a packet must never find an entry whose filter bit is clear.
  if (Status s = filter_->add(prefix, [this] { return prefixes(); }); !s) return s;
  return family(prefix, [&](const auto& m, uint32_t& count, const auto& key) -> Status {
    if (prefix.is_host()) return host_put(*hosts_, *filter_, m, count, prefix, key, e);
    return runtime::put(m.trie, count, key, e);
  });
}

Status BpfRuntimeLists::runtime_acl_remove(const Prefix& prefix) {
  Result<bool> gone =
      family(prefix, [&](const auto& m, uint32_t& count, const auto& key) -> Result<bool> {
        if (prefix.is_host()) return host_erase(*hosts_, *filter_, m, count, prefix, key);
        return runtime::erase(m.trie, count, key);
      });
  if (!gone) return gone.error();
  if (!*gone) return {};
  return filter_->removed([this] { return prefixes(); });
}

Result<std::vector<Prefix>> BpfRuntimeLists::prefixes() const {
  auto entries = runtime_acl_list();
  if (!entries) return entries.error();
  std::vector<Prefix> out;
  out.reserve(entries->size());
  for (const auto& e : *entries) out.push_back(e.prefix);
  return out;
}

Result<std::vector<RuntimeEntry>> BpfRuntimeLists::runtime_acl_list() const {
  std::vector<RuntimeEntry> out;
  hosts_->each([&](const RuntimeEntry& e) { out.push_back(e); });
  if (Status s = runtime::list(maps_v4(*skel_), 4, out); !s) return s.error();
  if (Status s = runtime::list(maps_v6(*skel_), 6, out); !s) return s.error();
  return out;
}

Result<std::optional<RuntimeEntry>> BpfRuntimeLists::runtime_acl_find(const Prefix& prefix) const {
  if (prefix.is_host())
    if (auto e = hosts_->find(prefix.addr)) return e;
  const bool hash = prefix.is_host() && filter_->hash_may_hold(prefix.addr.family == 6);
  return family(prefix, [&](const auto& m, uint32_t&, const auto& key) {
    return runtime::find(m, prefix.addr.family, key, hash);
  });
}

// The runtime lists' counts let packets skip the lookups while a family has no entry (the
// common case).
Status BpfRuntimeLists::load() {
  // Hosts in a hash: ones whose set was full.
  for (uint32_t fam6 = 0; fam6 < 2; fam6++) {
    auto empty =
        fam6 ? runtime::empty(maps_v6(*skel_).hosts) : runtime::empty(maps_v4(*skel_).hosts);
    if (!empty) return empty.error();
    if (!*empty) filter_->hash_in_use(fam6);
  }
  auto runtime = prefixes();
  if (!runtime) return runtime.error();
  const auto v6 = static_cast<uint32_t>(std::count_if(
      runtime->begin(), runtime->end(), [](const Prefix& p) { return p.addr.family == 6; }));
  std::atomic_ref<uint32_t>(control_->runtime_acl_v4)
      .store(static_cast<uint32_t>(runtime->size()) - v6);
  std::atomic_ref<uint32_t>(control_->runtime_acl_v6).store(v6);
  return filter_->rebuild(*runtime);
}

}  // namespace rl
