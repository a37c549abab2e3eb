// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/connections/connection_counter.h"

#include <cstring>

namespace rl::daemon {

ConnectionCounter::TupleBytes ConnectionCounter::bytes(const rl_conn_tuple& t) {
  TupleBytes b{};
  std::memcpy(b.data(), &t, sizeof(t));
  return b;
}

uint32_t ConnectionCounter::open(uint64_t hash) const {
  auto it = open_.find(hash);
  return it == open_.end() ? 0 : it->second;
}

Status ConnectionCounter::on_event(const ConnEvent& e) {
  const TupleBytes key = bytes(e.tuple);
  auto counted = by_tuple_.find(key);
  if (e.open) {
    // Each state change of an open connection is an event; it counts once.
    if (counted != by_tuple_.end()) return {};
    auto syn = dp_.take_admitted_syn(e.tuple);
    if (!syn) return syn.error();
    if (!*syn) return {};
    const uint64_t hash = (*syn)->hash;
    uint32_t n = open(hash) + 1;
    if (Status s = dp_.set_open_connections(hash, n); !s) return s;
    open_[hash] = n;
    by_tuple_.emplace(key, hash);
    return {};
  }
  if (counted == by_tuple_.end()) return {};
  const uint64_t hash = counted->second;
  uint32_t n = open(hash) - 1;
  if (Status s = dp_.set_open_connections(hash, n); !s) return s;
  if (n)
    open_[hash] = n;
  else
    open_.erase(hash);
  by_tuple_.erase(counted);
  return {};
}

Status ConnectionCounter::reconcile(const std::vector<rl_conn_tuple>& open_now) {
  std::set<TupleBytes> live;
  for (const auto& t : open_now) live.insert(bytes(t));
  std::vector<rl_conn_tuple> gone;
  for (const auto& [key, hash] : by_tuple_)
    if (!live.count(key)) {
      rl_conn_tuple t{};
      std::memcpy(&t, key.data(), sizeof(t));
      gone.push_back(t);
    }
  Status out;
  auto apply = [&](const rl_conn_tuple& t, bool open) {
    ConnEvent e;
    e.tuple = t;
    e.open = open;
    if (Status s = on_event(e); !s) out = s;
  };
  for (const auto& t : gone) apply(t, false);
  for (const auto& t : open_now) apply(t, true);
  return out;
}

Status ConnectionCounter::clear() {
  open_.clear();
  by_tuple_.clear();
  return dp_.clear_open_connections();
}

}  // namespace rl::daemon
