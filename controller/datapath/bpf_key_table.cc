// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/bpf_key_table.h"

#include <atomic>
#include <span>

#include "datapath/map.h"
#include "rl_hash.h"
#include "rl_layout.h"
#include "rl_xdp.skel.h"

namespace rl {

BpfKeyTable::BpfKeyTable(rl_xdp& skel, uint32_t sets, uint64_t seed)
    : resets_(&skel.bss->rl_key_resets),
      fd_(bpf_map__fd(skel.maps.rl_keys)),
      sets_(sets),
      low_bits_(rl_set_low_bits(sets)),
      seed_(seed) {}

Result<std::unique_ptr<BpfKeyTable>> BpfKeyTable::open(rl_xdp& skel, rl_control* control,
                                                       uint32_t sets, uint64_t seed) {
  std::unique_ptr<BpfKeyTable> t(new BpfKeyTable(skel, sets, seed));
  if (Status s = mmap_arrays({{skel.maps.rl_keys, &t->keys_},
                              {skel.maps.rl_key_summary, &t->summary_},
                              {skel.maps.rl_offenders, &t->offenders_}});
      !s)
    return s.error();
  // A fresh table starts at its smallest; an adopted one keeps the sets its keys are in.
  std::atomic_ref<uint32_t> active(control->key_sets_active);
  const uint32_t smallest = 1u << t->low_bits_;
  if (active.load() < smallest || active.load() > sets) active.store(smallest);
  t->growth_ = std::make_unique<KeySetGrowth>(
      std::span<rl_set>(t->keys_.as<rl_set>(), sets),
      std::span<rl_set_summary>(t->summary_.as<rl_set_summary>(), rl_summary_lines(sets)),
      &control->key_sets_active, t->low_bits_, rcu_grace_period);
  return t;
}

uint32_t BpfKeyTable::sets_active() const { return growth_->active(); }

uint32_t BpfKeyTable::resets() const { return std::atomic_ref<__u32>(*resets_).load(); }

std::array<uint32_t, 2> BpfKeyTable::sets_of(uint64_t hash) const {
  const uint32_t wide = rl_set_wide(rl_key_tag(hash), hash, low_bits_);
  const uint32_t active = sets_active();
  // 2^level sets: the table before the doubling under way.
  return {rl_set_index(wide, active), rl_set_index(wide, 1u << key_sets_level(active))};
}

Result<uint32_t> BpfKeyTable::grow(uint64_t tracked) {
  uint32_t want = key_sets_wanted(tracked, sets_active(), sets_);
  if (want <= sets_active()) return 0u;
  return growth_->grow_to(want);
}

// Split as growth does, a doubling per grace period: an adopted table's keys move to the sets
// packets will look in, and a fresh one has none to move.
Result<uint32_t> BpfKeyTable::grow_full() { return growth_->grow_to(sets_, sets_); }

// The slot is reset the way a claim resets it; a packet of the key racing with the reset may
// keep its own update, which is what it would have got a moment earlier anyway. A key whose set
// is splitting meanwhile (grow, on another thread) is in its new set, its old one, or both for a
// grace period: both are looked at.
size_t BpfKeyTable::reset_key(const rl_key& key) {
  const uint64_t hash = rl_key_hash(&key, seed_);
  const auto sets = sets_of(hash);
  const uint32_t tag = rl_key_tag(hash);
  size_t n = 0;
  for (size_t i = 0; i < sets.size(); i++) {
    if (i > 0 && sets[i] == sets[0]) continue;
    for (auto& slot : keys_.as<rl_set>()[sets[i]].way) {
      if (std::atomic_ref<__u32>(slot.tag).load() != tag) continue;
      std::atomic_ref<__u64>(slot.state).store(0);
      std::atomic_ref<__u32>(slot.idle).store(0);
      n++;
    }
  }
  // After the stores: a CPU's memo may hold the key's refusal, good only under the count it read
  // before the word (bpf/lib/memo.h).
  if (n) std::atomic_ref<__u32>(*resets_).fetch_add(1);
  return n;
}

std::optional<rl_slot> BpfKeyTable::read_key(const rl_key& key) const {
  const uint64_t hash = key_hash(key);
  const uint32_t tag = rl_key_tag(hash);
  for (uint32_t s : sets_of(hash))  // its set first, then the one it was in before a split
    for (const auto& slot : keys_.as<const rl_set>()[s].way) {
      rl_slot copy{};
      copy.tag = std::atomic_ref<__u32>(const_cast<__u32&>(slot.tag)).load();
      if (copy.tag != tag) continue;
      copy.idle = std::atomic_ref<__u32>(const_cast<__u32&>(slot.idle)).load();
      copy.state = std::atomic_ref<__u64>(const_cast<__u64&>(slot.state)).load();
      return copy;
    }
  return std::nullopt;
}

uint64_t BpfKeyTable::key_hash(const rl_key& key) const { return rl_key_hash(&key, seed_); }

uint64_t BpfKeyTable::offender_drops(uint64_t hash) const {
  return offenders_.as<const rl_offender>()[rl_offender_index(hash)].drops;
}

std::pair<uint64_t, uint64_t> BpfKeyTable::usage(uint64_t now_ns) const {
  uint64_t used = 0, blocked = 0;
  const rl_set* sets = keys_.as<const rl_set>();
  // Only the sets in use hold keys. A key's set comes from its seeded hash, so every stride-th
  // set is an unbiased sample.
  const uint32_t active = sets_active();
  uint32_t stride = active > kUsageScanSets ? (active + kUsageScanSets - 1) / kUsageScanSets : 1;
  uint64_t scanned = 0;
  for (uint32_t i = 0; i < active; i += stride, scanned++)
    for (const auto& slot : sets[i].way) {
      if (slot.tag == RL_TAG_FREE) continue;
      // A slot whose state is fresh again holds no information: it does not count as tracked.
      bool is_blocked = rl_state_blocked(slot.state, now_ns);
      if (is_blocked || !rl_idle_passed(slot.idle, now_ns)) used++;
      if (is_blocked) blocked++;
    }
  if (scanned == 0) return {0, 0};
  return {used * active / scanned, blocked * active / scanned};
}

}  // namespace rl
