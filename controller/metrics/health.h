// SPDX-License-Identifier: GPL-2.0-only
// /healthz and /readyz on the metrics endpoint, for Kubernetes probes and load balancers' checks.
// /healthz is liveness: rld answers and can read its data path; restarting rld would not fix
// anything else. /readyz is readiness: rld enforces the policy it is configured with on every
// interface it manages, not degraded and with no failed load since (the Snapshot's not_ready,
// computed by rld: daemon/status.h).
#pragma once

#include <string>

#include "metrics/snapshot.h"

namespace rl::metrics {

struct Health {
  bool ok = false;
  std::string text;  // one line per finding, for the response body
};

Health health_of(const Result<Snapshot>& snapshot);
Health readiness_of(const Result<Snapshot>& snapshot);

}  // namespace rl::metrics
