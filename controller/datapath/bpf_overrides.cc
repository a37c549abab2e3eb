// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/bpf_overrides.h"

#include <cstring>

#include "datapath/compat.h"
#include "datapath/loader.h"
#include "datapath/map.h"
#include "rl_xdp.skel.h"

namespace rl {
namespace {

template <typename K>
K key_of(uint32_t limit_id, const Prefix& p) {
  K k{};
  k.prefixlen = 32u + p.len;
  k.limit_id = limit_id;
  std::memcpy(k.addr, p.addr.bytes.data(), sizeof(k.addr));
  return k;
}

template <typename K>
Prefix prefix_of(const K& k, uint8_t family) {
  Address a;
  a.family = family;
  std::memcpy(a.bytes.data(), k.addr, sizeof(k.addr));
  return Prefix::of(a, static_cast<uint8_t>(k.prefixlen - 32));
}

// Every entry of one family's trie (which has no batch operations: a key at a time).
template <typename K>
Status list_trie(const MapRef<K, rl_override>& trie, uint8_t family,
                 std::vector<OverrideEntry>& out) {
  auto keys = trie.keys();
  if (!keys) return keys.error();
  for (const auto& k : *keys) {
    auto v = trie.find(k);
    if (!v) return v.error();
    if (*v) out.push_back({prefix_of(k, family), **v});  // else removed meanwhile
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<BpfOverrides>> BpfOverrides::open(const rl_xdp& skel) {
  std::unique_ptr<BpfOverrides> o(new BpfOverrides(skel));
  if (Status s = o->load(); !s) return s.error();
  return o;
}

Status BpfOverrides::load() {
  slot_counts_.assign(bpf_map__max_entries(skel_->maps.rl_override_slots), 0);
  auto all = override_list();
  if (!all) return all.error();
  for (const auto& e : *all) {
    const uint32_t slot = e.value.limit.stats_slot % slot_counts_.size();
    mirror_[{e.value.limit.id, e.prefix}] = slot;
    per_family_[e.prefix.addr.family == 6]++;
    slot_counts_[slot]++;
  }
  // Written whole: a count a crash left too high (or too low) is mended here.
  MapRef<uint32_t, uint32_t> slots(skel_->maps.rl_override_slots);
  for (uint32_t i = 0; i < slot_counts_.size(); i++)
    if (Status s = slots.update(i, slot_counts_[i]); !s) return s;
  return {};
}

Status BpfOverrides::count(uint32_t slot, int delta) {
  slot_counts_[slot] += delta;
  return MapRef<uint32_t, uint32_t>(skel_->maps.rl_override_slots).update(slot, slot_counts_[slot]);
}

Status BpfOverrides::override_set(const OverrideEntry& e) {
  const uint32_t id = e.value.limit.id;
  const uint32_t slot = e.value.limit.stats_slot % slot_counts_.size();
  const bool fam6 = e.prefix.addr.family == 6;
  auto it = mirror_.find({id, e.prefix});
  if (it == mirror_.end() && per_family_[fam6] >= RL_OVERRIDES_MAX)
    return Error{ENOSPC, "the runtime overrides hold " + std::to_string(RL_OVERRIDES_MAX) + " IPv" +
                             (fam6 ? "6" : "4") + " entries, their most"};
  // The new slot counts the entry before a packet can find it there; a replaced entry's old slot
  // (a rule that moved) lets go after.
  if (Status s = count(slot, +1); !s) return s;
  Status put = fam6 ? MapRef<rl_override6_key, rl_override>(skel_->maps.rl_override_v6)
                          .update(key_of<rl_override6_key>(id, e.prefix), e.value)
                    : MapRef<rl_override4_key, rl_override>(skel_->maps.rl_override_v4)
                          .update(key_of<rl_override4_key>(id, e.prefix), e.value);
  if (!put) {
    (void)count(slot, -1);
    return put;
  }
  if (it == mirror_.end()) {
    mirror_[{id, e.prefix}] = slot;
    per_family_[fam6]++;
    return {};
  }
  const uint32_t old = it->second;
  it->second = slot;
  return count(old, -1);
}

Result<bool> BpfOverrides::override_remove(uint32_t limit_id, const Prefix& prefix) {
  auto it = mirror_.find({limit_id, prefix});
  if (it == mirror_.end()) return false;
  const bool fam6 = prefix.addr.family == 6;
  Status gone = fam6 ? MapRef<rl_override6_key, rl_override>(skel_->maps.rl_override_v6)
                           .remove(key_of<rl_override6_key>(limit_id, prefix))
                     : MapRef<rl_override4_key, rl_override>(skel_->maps.rl_override_v4)
                           .remove(key_of<rl_override4_key>(limit_id, prefix));
  if (!gone) return gone.error();
  const uint32_t slot = it->second;
  mirror_.erase(it);
  per_family_[fam6]--;
  if (Status s = count(slot, -1); !s) return s.error();
  return true;
}

Result<std::vector<OverrideEntry>> BpfOverrides::override_list() const {
  std::vector<OverrideEntry> out;
  Status s = list_trie(MapRef<rl_override4_key, rl_override>(skel_->maps.rl_override_v4), 4, out);
  if (s) s = list_trie(MapRef<rl_override6_key, rl_override>(skel_->maps.rl_override_v6), 6, out);
  if (!s) return s.error();
  return out;
}

Status BpfOverrides::carry_from(const std::string& root, uint32_t old_abi) {
  if (old_abi < compat::kOverridesSinceAbi) {
    carry_error_ = "the replaced data path (ABI " + std::to_string(old_abi) + ") has no overrides";
    return {};
  }
  for (const bpf_map* like : {skel_->maps.rl_override_v4, skel_->maps.rl_override_v6}) {
    auto fd = open_replaced_map(root, like);
    if (!fd && fd.error().err == EPROTO) {
      carry_error_ = fd.error().message;
      return {};
    }
    if (!fd) return fd.error();
    const std::string name = bpf_map__name(like);
    Status s = like == skel_->maps.rl_override_v4
                   ? list_trie(MapRef<rl_override4_key, rl_override>(fd->get(), name), 4, carried_)
                   : list_trie(MapRef<rl_override6_key, rl_override>(fd->get(), name), 6, carried_);
    if (!s) return s.error().wrap("read the replaced overrides");
  }
  return {};
}

}  // namespace rl
