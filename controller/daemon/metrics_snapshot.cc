// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/metrics_snapshot.h"

#include <iterator>

namespace rl::daemon {

namespace {

void fill_cluster(const ClusterStats& st, metrics::ClusterSnapshot& c) {
  c.enabled = true;
  c.redis_up = st.redis_up;
  c.syncs = st.syncs;
  c.early_syncs = st.early_syncs;
  c.keys_last_sync = st.keys_last_sync;
  c.keys_synced_total = st.keys_synced_total;
  c.pending_keys = st.pending_keys;
  c.pending_dropped = st.pending_dropped;
  c.active_blocks = st.active_blocks;
  c.peers = st.peers.size();
  c.servers_changed = st.servers_changed;
  for (const auto& sv : st.servers)
    c.servers.push_back({sv.addr, sv.slots, sv.up, sv.errors, sv.moved, sv.ask,
                         std::chrono::duration<double>(sv.round_trip).count(), sv.calls > 0});
  c.last_pass_seconds = st.last_pass_seconds;
  c.errors = st.errors;
  c.rtt_bounds.assign(std::begin(ClusterSync::kRttBuckets), std::end(ClusterSync::kRttBuckets));
  c.rtt_buckets = st.rtt_buckets;
  c.rtt_buckets.resize(c.rtt_bounds.size());
  c.rtt_sum_seconds = st.rtt_sum_seconds;
  c.rtt_count = st.rtt_count;
}

}  // namespace

Result<metrics::Snapshot> metrics_snapshot(const RuleSets& in_force, const Counters& counters,
                                           const RuntimeLists& lists,
                                           const std::function<std::vector<RuleView>()>& rules,
                                           const StatusModel& status,
                                           const std::optional<ClusterStats>& cluster) {
  metrics::Snapshot s;
  auto g = counters.global_counters();
  if (!g) return g.error();
  for (int i = 0; i < RL_GC_MAX; i++) s.global[i] = (*g)[i];
  auto active = in_force.active_rules();
  if (!active) return active.error();
  std::vector<RuleView> views;
  for (const auto& [name, r] : *active) {
    auto c = counters.rule_counters(r.stats_slot);
    if (!c) return c.error();
    s.rules.push_back({name, r.action == RL_ACTION_MONITOR ? "monitor" : "drop", *c, {}});
    if (!r.more_limits) continue;
    auto by = counters.limit_counters(r.stats_slot);
    if (!by) return by.error();
    if (views.empty()) views = rules();
    for (const auto& v : views)
      if (v.name == name && v.compiled.more_limits == r.more_limits)
        for (uint32_t l = 0; l <= r.more_limits && l < RL_MAX_LIMITS; l++)
          s.rules.back().limits.emplace_back(limit_name(v, l), (*by)[l]);
  }
  fill_snapshot(status, s);
  if (cluster) fill_cluster(*cluster, s.cluster);
  if (auto entries = lists.runtime_acl_list())
    for (const auto& e : *entries)
      (e.flags & RL_SRC_F_ALLOW ? s.runtime_allow_entries : s.runtime_deny_entries)++;
  return s;
}

}  // namespace rl::daemon
