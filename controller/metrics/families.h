// SPDX-License-Identifier: GPL-2.0-only
// Snapshot -> Prometheus metric families. Kept apart from the HTTP server so that tests can
// check the exposition without one.
#pragma once

#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

#include "metrics/snapshot.h"

namespace rl::metrics {

// The build's version (CMake's PROJECT_VERSION), as rl_build_info reports it.
std::string_view version();

// Every family of a good scrape, rl_up 1 and rl_build_info included. Families are emitted even
// when they have no samples (no rules, no interfaces), so HELP and TYPE are always present.
std::vector<prometheus::MetricFamily> snapshot_families(const Snapshot& snapshot);

// A scrape whose snapshot failed: rl_up 0 and rl_build_info only. Exporting stale or partial
// numbers would hide the failure; a target that answers with rl_up 0 tells "rld is up but cannot
// read the data path" apart from "rld is down" (Prometheus's own up == 0).
std::vector<prometheus::MetricFamily> failed_scrape_families();

}  // namespace rl::metrics
