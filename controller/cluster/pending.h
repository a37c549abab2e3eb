// SPDX-License-Identifier: GPL-2.0-only
// Deltas waiting for Redis. While the store is unreachable the caller adds each interval's
// deltas here, summed per (rule, key); when it is back, take() hands them all out for one
// replaying sync. Memory is bounded: past max_keys a new key is refused and counted, never
// silently lost.
//
//   pending.add(this_interval);
//   if (store ready) {
//     auto batch = pending.take();
//     auto reply = store.sync(batch);
//     if (!reply) pending.add(batch);                                  // replay later
//     else for (size_t i : reply->rejected) pending.add(batch[i]);     // or drop and log
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "cluster/store.h"

namespace rl::cluster {

class PendingDeltas {
 public:
  static constexpr size_t kDefaultMaxKeys = 1'000'000;

  explicit PendingDeltas(size_t max_keys = kDefaultMaxKeys) : max_keys_(max_keys) {}

  // Sums d.delta into its (rule, key); the latest limit and window win, as after a policy
  // reload. Returns false if the key was new and the bound was hit (counted in dropped()).
  bool add(const KeyDelta& d);
  void add(const std::vector<KeyDelta>& deltas);
  // Everything pending, in no particular order; leaves this empty. dropped() is kept.
  std::vector<KeyDelta> take();

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  size_t max_keys() const { return max_keys_; }
  // Deltas refused because the bound was hit: how many, and the packets (or bytes) they held.
  uint64_t dropped() const { return dropped_; }
  uint64_t dropped_units() const { return dropped_units_; }

 private:
  bool add_entry(const KeyDelta& d);

  size_t max_keys_;
  // (rule, key) joined by a NUL, which neither contains.
  std::unordered_map<std::string, KeyDelta> entries_;
  uint64_t dropped_ = 0;
  uint64_t dropped_units_ = 0;
};

}  // namespace rl::cluster
