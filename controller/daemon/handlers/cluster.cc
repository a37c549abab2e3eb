// SPDX-License-Identifier: GPL-2.0-only
#include <cmath>

#include "daemon/handlers/handlers.h"

namespace rl::daemon::handlers {

Json cluster_status(const ClusterSync* sync, const std::string& node) {
  if (!sync) return control::fail("cluster limits are off: no Redis in rld's configuration");
  auto st = sync->stats();
  control::ClusterStatusResponse out;
  out.node = node;
  out.redis_up = st.redis_up;
  if (st.last_ok.time_since_epoch().count())
    out.last_sync_ms_ago = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now() - st.last_ok)
                               .count();
  out.syncs = st.syncs;
  out.early_syncs = st.early_syncs;
  out.keys_last_sync = st.keys_last_sync;
  out.keys_synced_total = st.keys_synced_total;
  out.last_pass_ms = static_cast<uint64_t>(std::llround(st.last_pass_seconds * 1000));
  out.pending_keys = st.pending_keys;
  out.pending_dropped = st.pending_dropped;
  out.errors = st.errors;
  out.last_error = st.last_error;
  out.topology = st.topology;
  out.redis = st.server;
  out.masters_changed = st.servers_changed;
  for (const auto& s : st.servers)
    out.servers.push_back({s.addr, s.slots, s.up, s.calls, s.errors, s.moved, s.ask,
                           static_cast<uint64_t>(s.round_trip.count())});
  for (const auto& p : st.peers) out.peers.push_back({p.node, p.last_seen_ms});
  for (const auto& b : sync->blocked()) out.blocked.push_back({b.rule, b.key, b.remaining_ms});
  return control::ok(out);
}

}  // namespace rl::daemon::handlers
