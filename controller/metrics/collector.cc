// SPDX-License-Identifier: GPL-2.0-only
#include "metrics/collector.h"

#include <exception>
#include <utility>

#include "metrics/families.h"

namespace rl::metrics {

Collector::Collector(SnapshotFn snapshot) : snapshot_(std::move(snapshot)) {}

Result<Snapshot> Collector::snapshot() const {
  try {
    MutexLock lock(mu_);
    if (!snapshot_) return Error{EINVAL, "no snapshot function"};
    return snapshot_();
  } catch (const std::exception& e) {
    return Error{0, std::string("snapshot: ") + e.what()};
  } catch (...) {
    return Error{0, "snapshot: unknown exception"};
  }
}

std::vector<prometheus::MetricFamily> Collector::Collect() const {
  try {
    Result<Snapshot> s = snapshot();
    if (s.ok()) return snapshot_families(*s);
  } catch (...) {
    // Falls through to a failed scrape: see the header.
  }
  try {
    return failed_scrape_families();
  } catch (...) {
    return {};
  }
}

}  // namespace rl::metrics
