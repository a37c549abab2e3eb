#include "daemon/offender_table.h"

#include <algorithm>

namespace rl::daemon {

OffenderTable::OffenderTable(uint32_t capacity) : capacity_(std::max<uint32_t>(capacity, 1)) {
  size_t cells = 2;
  while (cells < 2 * size_t{capacity_}) cells <<= 1;
  mask_ = cells - 1;
  // Default-initialised: the slab's pages stay untouched until entries land on them.
  slots_.reset(new Slot[capacity_]);  // NOLINT(modernize-make-unique): make_unique zeroes
  index_ = std::make_unique<uint32_t[]>(cells);
}

// The data path's key hash is seeded with a secret (docs/datapath.md), so a sender cannot aim
// keys at one run of the index; the multiply folds the rule id in.
size_t OffenderTable::home(uint32_t rule_id, uint64_t key_hash) const {
  uint64_t h = (key_hash ^ (uint64_t{rule_id} << 32 | rule_id)) * 0x9e3779b97f4a7c15ULL;
  return static_cast<size_t>(h >> 32) & mask_;
}

size_t OffenderTable::probe(uint32_t rule_id, uint64_t key_hash) const {
  for (size_t c = home(rule_id, key_hash);; c = (c + 1) & mask_) {
    probes_++;
    uint32_t v = index_[c];
    if (v == 0) return c;
    const OffenderEntry& e = slots_[v - 1].e;
    if (e.key_hash == key_hash && e.rule_id == rule_id) return c;
  }
}

const OffenderEntry* OffenderTable::find(uint32_t rule_id, uint64_t key_hash) const {
  uint32_t v = index_[probe(rule_id, key_hash)];
  return v ? &slots_[v - 1].e : nullptr;
}

// Backward-shift deletion: later cells of the run move up into the hole unless their home lies
// cyclically in (hole, cell], so no tombstones accumulate and probes stay short.
void OffenderTable::erase_cell(size_t hole) {
  for (size_t c = (hole + 1) & mask_;; c = (c + 1) & mask_) {
    probes_++;
    uint32_t v = index_[c];
    if (v == 0) break;
    const OffenderEntry& e = slots_[v - 1].e;
    size_t h = home(e.rule_id, e.key_hash);
    bool stays = hole <= c ? (hole < h && h <= c) : (hole < h || h <= c);
    if (stays) continue;
    index_[hole] = v;
    hole = c;
  }
  index_[hole] = 0;
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
  if (uint32_t v = index_[cell]) {
    slots_[v - 1].e = e;
    if (head_ != v - 1) {
      unlink(v - 1);
      push_front(v - 1);
    }
    return;
  }
  uint32_t i;
  if (size_ < capacity_) {
    i = static_cast<uint32_t>(size_++);
  } else {
    i = tail_;
    unlink(i);
    erase_cell(probe(slots_[i].e.rule_id, slots_[i].e.key_hash));
    cell = probe(e.rule_id, e.key_hash);  // the shift may have moved the run
  }
  slots_[i].e = e;
  index_[cell] = i + 1;
  push_front(i);
}

}  // namespace rl::daemon
