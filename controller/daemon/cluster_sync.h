// SPDX-License-Identifier: GPL-2.0-only
// rld's view of the cluster sync loop (cluster/sync/cluster_sync.h), which it composes from its
// configuration and policy in force (daemon_cluster.cc).
#pragma once

#include <vector>

#include "cluster/sync/cluster_sync.h"
#include "daemon/policy/policy_manager.h"

namespace rl::daemon {

using cluster::ClusterConfig;
using cluster::ClusterStats;
using cluster::ClusterSync;

// The rules of `rules` that have a cluster limit, as the sync loop reads them.
std::vector<cluster::SyncRule> cluster_rules(const std::vector<RuleView>& rules);

}  // namespace rl::daemon
