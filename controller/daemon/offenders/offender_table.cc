// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/offenders/offender_table.h"

#include <algorithm>

namespace rl::daemon {

OffenderTable::OffenderTable(uint32_t capacity)
    : capacity_(std::max<uint32_t>(capacity, 1)), index_(capacity_) {
  // Default-initialised: the slab's pages stay untouched until entries land on them.
  slots_.reset(new Slot[capacity_]);  // NOLINT(modernize-make-unique): make_unique zeroes
}

// The data path's key hash is seeded with a secret (docs/datapath.md), so a sender cannot aim
// keys at one run of the index; the multiply folds the rule id in.
uint64_t OffenderTable::hash(uint32_t rule_id, uint64_t key_hash) {
  return (key_hash ^ (uint64_t{rule_id} << 32 | rule_id)) * 0x9e3779b97f4a7c15ULL;
}

size_t OffenderTable::probe(uint32_t rule_id, uint64_t key_hash) const {
  return index_.probe(hash(rule_id, key_hash), [&](uint32_t i) {
    const OffenderEntry& e = slots_[i].e;
    return e.key_hash == key_hash && e.rule_id == rule_id;
  });
}

const OffenderEntry* OffenderTable::find(uint32_t rule_id, uint64_t key_hash) const {
  size_t cell = probe(rule_id, key_hash);
  return index_.empty(cell) ? nullptr : &slots_[index_.slot(cell)].e;
}

void OffenderTable::unlink(uint32_t i) {
  Slot& s = slots_[i];
  (s.prev == kNone ? head_ : slots_[s.prev].next) = s.next;
  (s.next == kNone ? tail_ : slots_[s.next].prev) = s.prev;
}

void OffenderTable::push_front(uint32_t i) {
  Slot& s = slots_[i];
  s.prev = kNone;
  s.next = head_;
  (head_ == kNone ? tail_ : slots_[head_].prev) = i;
  head_ = i;
}

void OffenderTable::record(const OffenderEntry& e) {
  size_t cell = probe(e.rule_id, e.key_hash);
  if (!index_.empty(cell)) {
    uint32_t v = index_.slot(cell);
    slots_[v].e = e;
    if (head_ != v) {
      unlink(v);
      push_front(v);
    }
    return;
  }
  uint32_t i;
  if (size_ < capacity_) {
    i = static_cast<uint32_t>(size_++);
  } else {
    i = tail_;
    unlink(i);
    index_.erase(probe(slots_[i].e.rule_id, slots_[i].e.key_hash),
                 [&](uint32_t s) { return hash(slots_[s].e.rule_id, slots_[s].e.key_hash); });
    cell = probe(e.rule_id, e.key_hash);  // the shift may have moved the run
  }
  slots_[i].e = e;
  index_.set(cell, i);
  push_front(i);
}

}  // namespace rl::daemon
