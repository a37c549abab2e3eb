// SPDX-License-Identifier: GPL-2.0-only
// Growing the key table while packets use it (linear hashing; the index is rl_set_index in
// abi/rl_hash.h). rl_keys is allocated at its capacity, but packets use only its first `active`
// sets: a table of a few thousand keys stays within a megabyte, which the CPU's caches and TLB
// hold, instead of spreading its keys over every page of the capacity. This is rld's side: it
// raises `active` as keys arrive. Pure code over the table's memory and the count, so that unit
// tests can drive it, with the kernel's grace period injected.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "common/result.h"
#include "rl_abi.h"

namespace rl {

// The sets a table holding `tracked` keys should have in use, at least `active` and at most
// `capacity` (both counts of sets). It grows once the keys average more than one per set of
// RL_WAYS (a quarter full), and then by whole doublings, to half a key per set. The load decides
// how often a key finds its set full and goes to its prefix's overflow bucket: of keys placed at
// random (each set's count a Poisson variable), 0.04% at half a key per set, 0.43% at one, 1.6%
// at 1.5 and 3.8% at 2. So the table stays between the default table's rate at 131,072 keys and
// its rate at 262,144. A growth in progress (`active` not a power of two) is always completed.
uint32_t key_sets_wanted(uint64_t tracked, uint32_t active, uint32_t capacity);

// The level L of a table with `active` sets in use: 2^L <= active < 2^(L+1). Sets from
// active - 2^L to 2^L - 1 have not split yet in the doubling under way.
uint32_t key_sets_level(uint32_t active);

class KeySetGrowth {
 public:
  // Returns once no packet that started before the call is still running (the XDP program runs
  // inside an RCU read-side section: synchronize_rcu, which membarrier(MEMBARRIER_CMD_GLOBAL)
  // waits for).
  using GracePeriod = std::function<Status()>;

  // `sets` is the whole table (its capacity, a power of two) and `summary` its summary
  // (rl_set_summary, one per RL_SUMMARY_SETS sets: a key placed in a set gets its print there
  // before its tag); `active` the count packets read (rl_control.key_sets_active), which only
  // this object raises.
  KeySetGrowth(std::span<rl_set> sets, std::span<rl_set_summary> summary, uint32_t* active,
               uint32_t low_bits, GracePeriod grace);

  // Splits the next sets, at most `count` and not past the end of the current doubling, under
  // one grace period; returns how many were split (0 at the capacity).
  Result<uint32_t> split(uint32_t count);

  // Splits until `target` sets are in use (at most the capacity), `chunk` sets per grace period.
  Result<uint32_t> grow_to(uint32_t target, uint32_t chunk = 4096);

  uint32_t active() const;

 private:
  // Places the key of `from` (tag, state, idle) in set t: into the slot already holding its tag
  // (folding the two states), else into a free way. False when every way of t is busy.
  bool place(uint32_t t, const rl_slot& from);
  // A copy of the slot if it holds a key that moves to the split's new set (the set is of level
  // `level`: 2^level <= active).
  std::optional<rl_slot> moving(rl_slot& way, uint32_t level) const;

  std::span<rl_set> sets_;
  std::span<rl_set_summary> summary_;
  uint32_t* active_;
  uint32_t low_bits_;
  GracePeriod grace_;
};

// The production grace period: membarrier(MEMBARRIER_CMD_GLOBAL), which calls synchronize_rcu.
Status rcu_grace_period();

}  // namespace rl
