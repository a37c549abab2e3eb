// SPDX-License-Identifier: GPL-2.0-only
// The open connections of each connection limit's key, kept from conntrack's events and written
// to the data path's count (Connections::set_open_connections), which it judges SYNs by. A
// connection counts once conntrack reports it established, against the key whose limit admitted
// its SYN (the data path left the SYN's tuple and key hash behind); it stops counting when it
// closes. Connections whose SYN no limit admitted (other ports, or opened before the limit was in
// force) are not counted. Pure: the data path is injected, so tests hand it a fake.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "daemon/connections/conntrack_events.h"
#include "datapath/datapath.h"

namespace rl::daemon {

class ConnectionCounter {
 public:
  explicit ConnectionCounter(Connections& dp) : dp_(dp) {}

  // One event. A data path error is returned and the count left as it was.
  Status on_event(const ConnEvent& e);
  // After lost events: `open_now` lists the connections conntrack holds open (a dump). Counted
  // ones no longer among them are closed; open ones not counted yet are counted if their SYN's
  // entry is still there.
  Status reconcile(const std::vector<rl_conn_tuple>& open_now);
  // Forgets every connection and sets every key's count in the data path back to 0, those of
  // connections it never saw included: before counting starts (the counts of an adopted data
  // path belong to connections no event will close) and when the limits are gone.
  Status clear();

  size_t tracked() const { return by_tuple_.size(); }
  uint32_t open(uint64_t hash) const;

 private:
  using TupleBytes = std::array<uint8_t, sizeof(rl_conn_tuple)>;
  static TupleBytes bytes(const rl_conn_tuple& t);

  Connections& dp_;
  std::map<TupleBytes, uint64_t> by_tuple_;  // counted connections: their key hash
  std::map<uint64_t, uint32_t> open_;        // key hash: open connections
};

}  // namespace rl::daemon
