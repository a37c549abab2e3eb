// SPDX-License-Identifier: GPL-2.0-only
// The offenders rld remembers for `rlctl top`: a table of fixed capacity that forgets the least
// recently seen offender when a new one arrives and it is full. A spoofed flood reports a new
// key with every report, so every operation here costs O(1) whatever the table holds: an
// open-addressing index (linear probing, load at most 1/2) into a slab of entries chained in
// recency order. Memory is fixed by the capacity (kBytesPerEntry per entry) and reserved up
// front; the slab's pages are touched as entries fill.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "daemon/support/slot_index.h"

namespace rl::daemon {

struct OffenderEntry {
  uint64_t key_hash = 0;
  int64_t last_seen_ns = 0;  // system_clock, ns since the epoch
  uint32_t rule_id = 0;
  uint32_t addr[4] = {};  // the key's address as the data path reported it (masked)
  uint16_t dport = 0;
  uint8_t family = 0;
  uint8_t key_kind = 0;
  bool blocked = false;
};

class OffenderTable {
 public:
  static constexpr uint32_t kDefaultCapacity = 65536;

  explicit OffenderTable(uint32_t capacity = kDefaultCapacity);

  // Inserts e, or refreshes the entry with its (rule_id, key_hash); either way it becomes the
  // most recently seen. When the table is full, the least recently seen entry makes room.
  void record(const OffenderEntry& e);

  size_t size() const { return size_; }
  uint32_t capacity() const { return capacity_; }
  const OffenderEntry* find(uint32_t rule_id, uint64_t key_hash) const;

  // Visits entries from the most recently seen; stops when fn returns false.
  template <typename F>
  void for_each_recent(F&& fn) const {
    for (uint32_t i = head_; i != kNone; i = slots_[i].next)
      if (!fn(slots_[i].e)) return;
  }

  // Index slots probed so far, for tests that check the cost per operation stays flat.
  uint64_t probes() const { return index_.probes(); }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  // Recency chain: prev is more recent. Not initialised: see the slab in offender_table.cc.
  struct Slot {  // NOLINT(cppcoreguidelines-pro-type-member-init)
    OffenderEntry e;
    uint32_t prev, next;
  };

 public:
  // A slot and its share of the index.
  static constexpr size_t kBytesPerEntry = sizeof(Slot) + SlotIndex::kBytesPerEntry;

 private:
  static uint64_t hash(uint32_t rule_id, uint64_t key_hash);
  // The index cell holding (rule_id, key_hash), or the empty cell where it would go.
  size_t probe(uint32_t rule_id, uint64_t key_hash) const;
  void unlink(uint32_t i);
  void push_front(uint32_t i);

  uint32_t capacity_;
  std::unique_ptr<Slot[]> slots_;
  SlotIndex index_;
  size_t size_ = 0;
  uint32_t head_ = kNone, tail_ = kNone;
};

}  // namespace rl::daemon
