// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/traffic/heavy_hitters.h"

#include <algorithm>
#include <cstring>

#include "rl_hash.h"

namespace rl::daemon {

HeavyHitters::HeavyHitters(uint32_t capacity, uint64_t seed)
    : capacity_(std::max<uint32_t>(capacity, 1)),
      seed_(seed),
      nodes_(new Node[capacity_]),
      buckets_(new Bucket[capacity_]),
      index_(capacity_) {}

uint64_t HeavyHitters::hash(const rl_key& k) const { return rl_key_hash(&k, seed_); }

size_t HeavyHitters::probe(const rl_key& k, uint64_t h) const {
  return index_.probe(h, [&](uint32_t n) {
    return nodes_[n].hash == h && std::memcmp(&nodes_[n].e.key, &k, sizeof(k)) == 0;
  });
}

const HeavyHitters::Entry* HeavyHitters::find(const rl_key& k) const {
  size_t cell = probe(k, hash(k));
  return index_.empty(cell) ? nullptr : &nodes_[index_.slot(cell)].e;
}

uint64_t HeavyHitters::min_count() const {
  return size_ < capacity_ || min_ == kNone ? 0 : buckets_[min_].count;
}

void HeavyHitters::clear() {
  index_.clear();
  size_ = 0;
  min_ = free_buckets_ = kNone;
  buckets_used_ = 0;
  total_ = total_bytes_ = 0;
}

uint32_t HeavyHitters::new_bucket(uint64_t count, uint32_t after) {
  uint32_t b;
  if (free_buckets_ != kNone) {
    b = free_buckets_;
    free_buckets_ = buckets_[b].next;
  } else {
    b = buckets_used_++;  // at most one bucket per entry: never past the capacity
  }
  Bucket& nb = buckets_[b];
  nb.count = count;
  nb.head = kNone;
  nb.prev = after;
  nb.next = after == kNone ? min_ : buckets_[after].next;
  if (nb.next != kNone) buckets_[nb.next].prev = b;
  (after == kNone ? min_ : buckets_[after].next) = b;
  return b;
}

void HeavyHitters::attach(uint32_t n, uint32_t b) {
  Node& node = nodes_[n];
  node.bucket = b;
  node.prev = kNone;
  node.next = buckets_[b].head;
  if (node.next != kNone) nodes_[node.next].prev = n;
  buckets_[b].head = n;
  node.e.count = buckets_[b].count;
}

void HeavyHitters::detach(uint32_t n) {
  Node& node = nodes_[n];
  uint32_t b = node.bucket;
  (node.prev == kNone ? buckets_[b].head : nodes_[node.prev].next) = node.next;
  if (node.next != kNone) nodes_[node.next].prev = node.prev;
  if (buckets_[b].head != kNone) return;
  Bucket& old = buckets_[b];
  (old.prev == kNone ? min_ : buckets_[old.prev].next) = old.next;
  if (old.next != kNone) buckets_[old.next].prev = old.prev;
  old.next = free_buckets_;
  free_buckets_ = b;
}

// count + 1: into the next bucket if it holds that count, else a bucket of its own (the entry's
// bucket itself when the entry is alone in it).
void HeavyHitters::increment(uint32_t n) {
  uint32_t b = nodes_[n].bucket;
  uint64_t c = buckets_[b].count + 1;
  uint32_t next = buckets_[b].next;
  if (next != kNone && buckets_[next].count == c) {
    detach(n);
    attach(n, next);
  } else if (buckets_[b].head == n && nodes_[n].next == kNone) {
    buckets_[b].count = c;
    nodes_[n].e.count = c;
  } else {
    uint32_t nb = new_bucket(c, b);
    detach(n);  // b keeps its other entries
    attach(n, nb);
  }
}

void HeavyHitters::add(const rl_key& k, uint32_t bytes, bool dropped) {
  total_++;
  total_bytes_ += bytes;
  uint64_t h = hash(k);
  size_t cell = probe(k, h);
  if (!index_.empty(cell)) {
    uint32_t n = index_.slot(cell);
    nodes_[n].e.bytes += bytes;
    nodes_[n].e.dropped += dropped;
    increment(n);
    return;
  }
  uint32_t n;
  uint64_t inherited = 0;
  if (size_ < capacity_) {
    // A new entry counts 1: the lowest count there can be, so its bucket is the first.
    n = static_cast<uint32_t>(size_++);
    uint32_t b = min_ != kNone && buckets_[min_].count == 1 ? min_ : new_bucket(1, kNone);
    attach(n, b);
  } else {
    // Space-Saving: the key takes the place of an entry of the lowest count and goes on from
    // there; that count is its error.
    n = buckets_[min_].head;
    inherited = buckets_[min_].count;
    index_.erase(probe(nodes_[n].e.key, nodes_[n].hash),
                 [&](uint32_t s) { return nodes_[s].hash; });
    cell = probe(k, h);  // the shift may have moved the run
    increment(n);
  }
  Node& node = nodes_[n];
  node.hash = h;
  node.e.key = k;
  node.e.error = inherited;
  node.e.bytes = bytes;
  node.e.dropped = dropped;
  index_.set(cell, n);
}

}  // namespace rl::daemon
