// SPDX-License-Identifier: GPL-2.0-only
// What a metrics scrape shows, gathered on the exporter's thread: the data path's counters and
// the rule set in force, what rld says about itself (status.h), the cluster sync's figures and
// the runtime lists' sizes. A function of the narrow data path interfaces, so that unit tests
// build one over tests/support/fake_datapath.h.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "common/result.h"
#include "daemon/cluster_sync.h"
#include "daemon/policy/policy_manager.h"
#include "daemon/status.h"
#include "datapath/datapath.h"
#include "metrics/snapshot.h"

namespace rl::daemon {

// `rules` names the stacked limits; it copies the policy's rules, so it is asked only when a
// rule in force has some. `cluster` is empty when cluster limits are off.
Result<metrics::Snapshot> metrics_snapshot(const RuleSets& in_force, const Counters& counters,
                                           const RuntimeLists& lists,
                                           const std::function<std::vector<RuleView>()>& rules,
                                           const StatusModel& status,
                                           const std::optional<ClusterStats>& cluster);

}  // namespace rl::daemon
