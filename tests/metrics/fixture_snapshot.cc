// SPDX-License-Identifier: GPL-2.0-only
#include "fixture_snapshot.h"

namespace rl::testing {

metrics::Snapshot fixture_snapshot() {
  metrics::Snapshot s;

  metrics::RuleSnapshot ssh{kFixtureDropRule, "drop", {}};
  ssh.counters.matched_pkts = 5000;
  ssh.counters.matched_bytes = 400000;
  ssh.counters.passed_pkts = 5000 - kFixtureDropRuleDropped;
  ssh.counters.passed_bytes = 400000 - kFixtureDropRuleDropped * 80;
  ssh.counters.dropped_pkts = kFixtureDropRuleDropped;
  ssh.counters.dropped_bytes = kFixtureDropRuleDropped * 80;
  s.rules.push_back(ssh);

  metrics::RuleSnapshot api{"api-burst", "monitor", {}};
  api.counters.matched_pkts = 800;
  api.counters.matched_bytes = 960000;
  api.counters.passed_pkts = 800;
  api.counters.passed_bytes = 960000;
  api.counters.monitored_pkts = 120;
  api.counters.monitored_bytes = 144000;
  s.rules.push_back(api);

  for (int i = 0; i < RL_GC_MAX; ++i) {
    s.global[i].pkts = uint64_t(i + 1) * 11;
    bool has_bytes = i != RL_GC_KEY_INSERTED && i != RL_GC_REPORTS && i != RL_GC_REPORTS_LOST;
    s.global[i].bytes = has_bytes ? uint64_t(i + 1) * 1100 : 0;
  }

  s.keys_tracked = 850000;
  s.keys_capacity = 1048576;
  s.keys_capacity_in_use = 131072;
  s.active_blocks = 17;
  s.interfaces = {{"eth0", "native"}, {"eth1", "generic"}};
  s.reloads_ok = 3;
  s.reloads_failed = 1;
  s.last_reload_success_seconds = 1700000000;
  s.last_reload_ok = true;
  s.generation = 4;
  s.runtime_allow_entries = 2;
  s.runtime_deny_entries = 5;
  s.cluster.enabled = true;
  s.cluster.redis_up = true;
  s.cluster.syncs = 1200;
  s.cluster.early_syncs = 30;
  s.cluster.keys_last_sync = 17;
  s.cluster.keys_synced_total = 9000;
  s.cluster.pending_keys = 0;
  s.cluster.pending_dropped = 0;
  s.cluster.active_blocks = 2;
  s.cluster.peers = 3;
  s.cluster.last_pass_seconds = 0.042;
  s.cluster.errors = {{"timeout", 1}};
  s.cluster.rtt_bounds = {0.001, 0.01, 0.1};
  s.cluster.rtt_buckets = {900, 1190, 1200};
  s.cluster.rtt_sum_seconds = 1.5;
  s.cluster.rtt_count = 1200;
  s.cluster.servers = {{"10.0.0.5:6379", 8192, true, 0, 2, 1, 0.0004},
                       {"10.0.0.6:6379", 8192, true, 1, 0, 0, 0.0005}};
  return s;
}

}  // namespace rl::testing
