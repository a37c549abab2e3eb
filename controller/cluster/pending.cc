// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/pending.h"

#include <limits>
#include <new>

namespace rl::cluster {
namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

}  // namespace

bool PendingDeltas::add(const KeyDelta& d) {
  try {
    return add_entry(d);
  } catch (const std::bad_alloc&) {
    // Out of memory is the bound we did not choose: still counted, not lost silently.
    dropped_ = saturating_add(dropped_, 1);
    dropped_units_ = saturating_add(dropped_units_, d.delta);
    return false;
  }
}

bool PendingDeltas::add_entry(const KeyDelta& d) {
  std::string id;
  id.reserve(d.rule.size() + 1 + d.key.size());
  id.append(d.rule).push_back('\0');
  id.append(d.key);
  auto it = entries_.find(id);
  if (it == entries_.end()) {
    if (entries_.size() >= max_keys_) {
      dropped_ = saturating_add(dropped_, 1);
      dropped_units_ = saturating_add(dropped_units_, d.delta);
      return false;
    }
    entries_.emplace(std::move(id), d);
    return true;
  }
  KeyDelta& e = it->second;
  e.delta = saturating_add(e.delta, d.delta);
  e.limit = d.limit;
  e.window_ms = d.window_ms;
  return true;
}

void PendingDeltas::add(const std::vector<KeyDelta>& deltas) {
  for (const auto& d : deltas) add(d);
}

std::vector<KeyDelta> PendingDeltas::take() {
  std::vector<KeyDelta> out;
  out.reserve(entries_.size());
  for (auto& [id, d] : entries_) out.push_back(std::move(d));
  entries_.clear();
  return out;
}

}  // namespace rl::cluster
