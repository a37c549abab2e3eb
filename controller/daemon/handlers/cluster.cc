// SPDX-License-Identifier: GPL-2.0-only
#include <cmath>

#include "daemon/handlers/handlers.h"

namespace rl::daemon::handlers {

Json cluster_status(const ClusterSync* sync, const std::string& node) {
  if (!sync) return control::fail("cluster limits are off: no Redis in rld's configuration");
  auto st = sync->stats();
  Json peers = Json::array();
  for (const auto& p : st.peers)
    peers.push_back({{"node", p.node}, {"last_seen_ms", p.last_seen_ms}});
  Json blocked = Json::array();
  for (const auto& b : sync->blocked())
    blocked.push_back({{"rule", b.rule}, {"key", b.key}, {"remaining_ms", b.remaining_ms}});
  Json errors = Json::object();
  for (const auto& [k, v] : st.errors) errors[k] = v;
  auto ago = st.last_ok.time_since_epoch().count()
                 ? Json(std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now() - st.last_ok)
                            .count())
                 : Json(nullptr);
  return control::ok(
      {{"node", node},
       {"redis_up", st.redis_up},
       {"last_sync_ms_ago", ago},
       {"syncs", st.syncs},
       {"early_syncs", st.early_syncs},
       {"keys_last_sync", st.keys_last_sync},
       {"last_pass_ms", static_cast<uint64_t>(std::llround(st.last_pass_seconds * 1000))},
       {"pending_keys", st.pending_keys},
       {"pending_dropped", st.pending_dropped},
       {"errors", errors},
       {"peers", peers},
       {"blocked", blocked}});
}

}  // namespace rl::daemon::handlers
