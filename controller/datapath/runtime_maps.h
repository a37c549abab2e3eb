// SPDX-License-Identifier: GPL-2.0-only
// The runtime lists' kernel maps (abi/rl_abi.h, "Runtime allow/deny entries"): per family a
// hosts' hash and a prefixes' trie with one key type, and the operations the runtime lists
// (runtime_lists.cc) and their compatibility shims (compat.h) build on.
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "common/prefix.h"
#include "common/result.h"
#include "datapath/datapath.h"
#include "datapath/map.h"
#include "rl_abi.h"

namespace rl::runtime {

inline rl_runtime_lpm4_key key4(const Prefix& p) {
  rl_runtime_lpm4_key k{p.len, {}};
  std::memcpy(k.addr, p.addr.bytes.data(), 4);
  return k;
}
inline rl_runtime_lpm6_key key6(const Prefix& p) {
  rl_runtime_lpm6_key k{p.len, {}};
  std::memcpy(k.addr, p.addr.bytes.data(), 16);
  return k;
}

// rl_control.runtime_acl_v4/v6 count each family's entries (hosts and prefixes), so that packets
// skip the lookups while a family has none. rld's main loop is their only writer, and each add or
// remove moves its family's count by one (counting by listing the trie would make adding N
// entries quadratic in N). The count goes up before an entry goes in and down after one is gone, so
// a packet never reads fewer than the maps hold (0 would skip an entry); BpfRuntimeLists::load()
// recounts, which mends a count a crash left too high.
template <typename K>
Status put(const MapRef<K, rl_runtime_entry>& map, uint32_t& count, const K& key,
           const rl_runtime_entry& e) {
  std::atomic_ref<uint32_t> n(count);
  n.fetch_add(1);
  Status s = map.update(key, e, BPF_NOEXIST);
  if (s) return s;
  n.fetch_sub(1);
  if (s.error().err != EEXIST) return s;
  return map.update(key, e, BPF_EXIST);  // a new expiry or list for the same prefix
}

// Whether the entry was there.
template <typename K>
Result<bool> erase(const MapRef<K, rl_runtime_entry>& map, uint32_t& count, const K& key) {
  if (bpf_map_delete_elem(map.fd(), &key) != 0) {
    if (errno == ENOENT) return false;
    return errno_error("delete " + map.name());
  }
  std::atomic_ref<uint32_t>(count).fetch_sub(1);
  return true;
}

// A family's runtime maps (rl_abi.h): its hosts' hash and its prefixes' trie, one key type.
template <typename K>
struct Maps {
  MapRef<K, rl_runtime_entry> hosts, trie;
  Maps(const bpf_map* h, const bpf_map* t) : hosts(h), trie(t) {}
  Maps(MapRef<K, rl_runtime_entry> h, MapRef<K, rl_runtime_entry> t)
      : hosts(std::move(h)), trie(std::move(t)) {}
};

// Whether a map holds no entry at all.
template <typename K>
Result<bool> empty(const MapRef<K, rl_runtime_entry>& map) {
  K next{};
  if (bpf_map_get_next_key(map.fd(), nullptr, &next) == 0) return false;
  if (errno == ENOENT) return true;
  return errno_error("iterate " + map.name());
}

// Every entry of a family, with the map holding it: the hosts' hash in batches of thousands per
// syscall, the trie (which has no batch operations) a key at a time.
template <typename K, typename Fn>
Status each(const Maps<K>& m, Fn&& fn) {
  auto hosts = m.hosts.entries();
  if (!hosts) return hosts.error();
  for (const auto& [k, e] : *hosts) fn(m.hosts, k, e);
  auto keys = m.trie.keys();
  if (!keys) return keys.error();
  for (const auto& k : *keys) {
    auto e = m.trie.find(k);
    if (!e) return e.error();
    if (*e) fn(m.trie, k, **e);  // else removed meanwhile
  }
  return {};
}

template <typename K>
Prefix prefix_of(const K& k, uint8_t family) {
  Address a;
  a.family = family;
  std::memcpy(a.bytes.data(), k.addr, sizeof(k.addr));
  return Prefix::of(a, static_cast<uint8_t>(k.prefixlen));
}

template <typename K>
Status list(const Maps<K>& m, uint8_t family, std::vector<RuntimeEntry>& out) {
  return each(m, [&](const auto&, const K& k, const rl_runtime_entry& e) {
    out.push_back({prefix_of(k, family), e.flags, e.expires_ns});
  });
}

// The hash holds only exact keys (`host_hash`: ask it). A trie lookup answers the longest match at
// most the key's length: the entry it finds is the key's own only if its length is the key's.
template <typename K>
Result<std::optional<RuntimeEntry>> find(const Maps<K>& m, uint8_t family, const K& key,
                                         bool host_hash) {
  auto entry = [&](const rl_runtime_entry& e) {
    return std::optional<RuntimeEntry>(RuntimeEntry{prefix_of(key, family), e.flags, e.expires_ns});
  };
  if (host_hash) {
    auto e = m.hosts.find(key);
    if (!e) return e.error();
    if (*e) return entry(**e);
  }
  auto e = m.trie.find(key);
  if (!e) return e.error();
  if (*e && (*e)->prefixlen == key.prefixlen) return entry(**e);
  return std::optional<RuntimeEntry>();
}
}  // namespace rl::runtime
