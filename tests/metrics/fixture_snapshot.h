// SPDX-License-Identifier: GPL-2.0-only
// One fixed Snapshot shared by the exporter's tests and metrics_fixture_server, so that the
// Prometheus server test, the dashboard check and the unit tests all see the same numbers.
#pragma once

#include <cstdint>

#include "metrics/snapshot.h"

namespace rl::testing {

inline constexpr char kFixtureDropRule[] = "ssh-per-source";
inline constexpr uint64_t kFixtureDropRuleDropped = 1234;

// Global counter i holds (i + 1) * 11 packets and (i + 1) * 1100 bytes, except the counters the
// data path records without bytes (key inserts, reports), which hold 0 bytes as they would.
metrics::Snapshot fixture_snapshot();

}  // namespace rl::testing
