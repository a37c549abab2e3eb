// SPDX-License-Identifier: GPL-2.0-only
// An open-addressing index (linear probing, load at most 1/2) from a key to a slot number in a
// table of fixed capacity: the offender table's and the heavy-hitter table's. The table keeps
// its entries; a cell holds slot + 1 (0 is empty). Deletion shifts later cells of a run back
// instead of leaving tombstones, so probes stay short however many keys come and go. The
// callers hash with a seed an attacker does not know, so keys cannot be aimed at one run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace rl::daemon {

class SlotIndex {
 public:
  // Cells: the next power of two at or above twice the capacity.
  explicit SlotIndex(uint32_t capacity) {
    size_t cells = 2;
    while (cells < 2 * size_t{capacity}) cells <<= 1;
    mask_ = cells - 1;
    cells_ = std::make_unique<uint32_t[]>(cells);
  }
  static constexpr size_t kBytesPerEntry = 2 * sizeof(uint32_t);  // capacity a power of two

  // The cell of the first slot that `is(slot)` accepts, from the cell that `hash` selects; or
  // the empty cell where such a slot would go.
  template <typename Is>
  size_t probe(uint64_t hash, Is&& is) const {
    for (size_t c = home(hash);; c = (c + 1) & mask_) {
      probes_++;
      uint32_t v = cells_[c];
      if (v == 0 || is(v - 1)) return c;
    }
  }
  // The slot in `cell`, or UINT32_MAX if it is empty.
  uint32_t slot(size_t cell) const { return cells_[cell] - 1; }
  bool empty(size_t cell) const { return cells_[cell] == 0; }
  void set(size_t cell, uint32_t slot) { cells_[cell] = slot + 1; }

  // Empties `cell`. Later cells of its run move up into the hole unless the cell their hash
  // selects lies cyclically in (hole, cell]; hash_of(slot) gives a slot's hash.
  template <typename HashOf>
  void erase(size_t hole, HashOf&& hash_of) {
    for (size_t c = (hole + 1) & mask_;; c = (c + 1) & mask_) {
      probes_++;
      uint32_t v = cells_[c];
      if (v == 0) break;
      size_t h = home(hash_of(v - 1));
      bool stays = hole <= c ? (hole < h && h <= c) : (hole < h || h <= c);
      if (stays) continue;
      cells_[hole] = v;
      hole = c;
    }
    cells_[hole] = 0;
  }

  void clear() { std::memset(cells_.get(), 0, (mask_ + 1) * sizeof(uint32_t)); }

  // Cells probed so far, for tests that check the cost per operation stays flat.
  uint64_t probes() const { return probes_; }

 private:
  size_t home(uint64_t hash) const { return static_cast<size_t>(hash >> 32) & mask_; }

  size_t mask_ = 1;
  std::unique_ptr<uint32_t[]> cells_;
  mutable uint64_t probes_ = 0;
};

}  // namespace rl::daemon
