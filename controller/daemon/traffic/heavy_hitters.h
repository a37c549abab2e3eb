// SPDX-License-Identifier: GPL-2.0-only
// The keys that sent the most sampled packets, for `rlctl top --by traffic`: Space-Saving
// (Metwally, Agrawal, El Abbadi 2005) over a table of fixed capacity m, with its "stream
// summary" (entries grouped in buckets of equal count, buckets in count order), so that a sample
// costs O(1) whatever the table holds: an index probe, and moving one entry to the next bucket.
//
// What it guarantees, after N samples (exact for any stream, not on average):
// - a key in the table has count >= its true number of samples, and count - error <= it;
// - error <= min_count() <= N / m, and a key not in the table had at most min_count() samples;
// - so every key with more than N / m samples is in the table.
// A new key that finds the table full takes the place of an entry of the lowest count, c, and
// starts at c + 1 with error c. Bytes and drops are counted from when a key entered the table.
//
// Memory is fixed by the capacity (kBytesPerEntry per entry), all reserved up front.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "daemon/support/slot_index.h"
#include "rl_abi.h"

namespace rl::daemon {

class HeavyHitters {
 public:
  struct Entry {
    rl_key key{};
    uint64_t count = 0;    // samples: an over-estimate by at most `error`
    uint64_t error = 0;    // the count it inherited from the entry it replaced
    uint64_t bytes = 0;    // bytes of the samples counted since the key entered
    uint64_t dropped = 0;  // of those samples, the ones the data path dropped
  };

  // seed keys the index's hash (an attacker chooses the sources).
  HeavyHitters(uint32_t capacity, uint64_t seed);

  void add(const rl_key& k, uint32_t bytes, bool dropped);
  void clear();  // O(capacity) at most: the index is zeroed

  const Entry* find(const rl_key& k) const;
  // Upper bound on the samples of a key the table does not hold: 0 until the table is full.
  uint64_t min_count() const;
  uint64_t total() const { return total_; }  // samples added since the last clear()
  uint64_t total_bytes() const { return total_bytes_; }
  size_t size() const { return size_; }
  uint32_t capacity() const { return capacity_; }

  template <typename F>
  void for_each(F&& fn) const {
    for (size_t i = 0; i < size_; i++) fn(nodes_[i].e);
  }

  // Index cells probed so far (the cost per sample stays flat: tests).
  uint64_t probes() const { return index_.probes(); }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    Entry e;
    uint64_t hash = 0;
    uint32_t bucket = kNone, prev = kNone, next = kNone;  // the bucket's entries of this count
  };
  struct Bucket {
    uint64_t count = 0;
    uint32_t head = kNone;                // first entry
    uint32_t prev = kNone, next = kNone;  // buckets in increasing count
  };

 public:
  static constexpr size_t kBytesPerEntry =
      sizeof(Node) + sizeof(Bucket) + SlotIndex::kBytesPerEntry;

 private:
  uint64_t hash(const rl_key& k) const;
  size_t probe(const rl_key& k, uint64_t h) const;
  uint32_t new_bucket(uint64_t count, uint32_t after);  // after kNone: the first bucket
  void attach(uint32_t n, uint32_t b);
  void detach(uint32_t n);  // frees the bucket it leaves empty
  void increment(uint32_t n);

  uint32_t capacity_;
  uint64_t seed_;
  std::unique_ptr<Node[]> nodes_;
  std::unique_ptr<Bucket[]> buckets_;
  SlotIndex index_;
  size_t size_ = 0;
  uint32_t min_ = kNone;           // the bucket of the lowest count
  uint32_t free_buckets_ = kNone;  // freed buckets, chained by next
  uint32_t buckets_used_ = 0;      // buckets ever taken from the array since clear()
  uint64_t total_ = 0, total_bytes_ = 0;
};

}  // namespace rl::daemon
