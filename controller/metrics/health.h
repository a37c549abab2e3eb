// SPDX-License-Identifier: GPL-2.0-only
// /healthz on the metrics endpoint, for Kubernetes probes and load balancers' checks: healthy
// while rld can read its data path and every interface it manages still runs an XDP program.
// A failed policy reload is not unhealthy: the policy before it is still enforced (the alert
// RlPolicyReloadFailing covers it).
#pragma once

#include <string>

#include "metrics/snapshot.h"

namespace rl::metrics {

struct Health {
  bool ok = false;
  std::string text;  // one line per finding, for the response body
};

Health health_of(const Result<Snapshot>& snapshot);

}  // namespace rl::metrics
