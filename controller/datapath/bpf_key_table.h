// SPDX-License-Identifier: GPL-2.0-only
// The key table (rl_keys), its summary and the offenders' slots, mmapped: one key's slot found
// as packets find it, the table's usage, and its growth while packets use it (key_sets.h).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "common/fd.h"
#include "datapath/datapath.h"
#include "datapath/key_sets.h"

struct rl_xdp;

namespace rl {

class BpfKeyTable final : public KeyTable {
 public:
  // `sets` is the table's capacity and `seed` its hash's secret (the loader's choice); `control`
  // the mmapped rl_control, whose key_sets_active this object keeps.
  static Result<std::unique_ptr<BpfKeyTable>> open(rl_xdp& skel, rl_control* control, uint32_t sets,
                                                   uint64_t seed);

  // Another key with the same set and 32-bit tag as the one asked for would be read and reset
  // too, as the data path would judge it by that slot.
  size_t reset_key(const rl_key& key) override;
  std::optional<rl_slot> read_key(const rl_key& key) const override;
  uint64_t key_hash(const rl_key& key) const override;
  uint64_t offender_drops(uint64_t hash) const override;

  // Slots holding a key and keys inside a block period, at `now_ns` (CLOCK_MONOTONIC). Exact up
  // to kUsageScanSets sets (the default table, 16 MiB, a few ms to read); a larger table is
  // sampled evenly over that many sets and scaled up, so `rlctl status` and a scrape stay
  // cheap whatever the capacity. Scans the sets in use only.
  static constexpr uint32_t kUsageScanSets = 1u << 18;
  std::pair<uint64_t, uint64_t> usage(uint64_t now_ns) const;

  uint32_t sets() const { return sets_; }  // the capacity, in sets
  // The sets packets use (rl_control.key_sets_active): from 2^RL_KEY_SETS_MIN_LOG2 (or the
  // capacity, if smaller) up to the capacity, raised by grow.
  uint32_t sets_active() const;
  // How many times a key's state word went down other than by time (bpf/lib/limiter.h's
  // rl_key_resets): reset_key's resets and the tokens budgets gave back.
  uint32_t resets() const;
  // Grows the sets in use to suit `tracked` keys (key_sets_wanted); returns the sets added.
  Result<uint32_t> grow(uint64_t tracked);
  // Splits until every set is in use, a doubling per grace period.
  Result<uint32_t> grow_full();

  const rl_set* table() const { return keys_.as<const rl_set>(); }
  const rl_set_summary* summary() const { return summary_.as<const rl_set_summary>(); }
  int fd() const { return fd_; }

 private:
  BpfKeyTable(rl_xdp& skel, uint32_t sets, uint64_t seed);
  // The set a key with this hash is in, and the set it was in before the doubling under way
  // (the same set unless the key moves in it).
  std::array<uint32_t, 2> sets_of(uint64_t hash) const;

  MmapRegion keys_;
  MmapRegion summary_;  // rl_key_summary
  MmapRegion offenders_;
  uint32_t* resets_;  // rl_key_resets, in the program's .bss
  int fd_;
  uint32_t sets_;
  uint32_t low_bits_;  // rl_set_low_bits(sets_)
  uint64_t seed_;
  std::unique_ptr<KeySetGrowth> growth_;
};

}  // namespace rl
