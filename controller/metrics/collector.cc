#include "metrics/collector.h"

#include <utility>

#include "metrics/families.h"

namespace rl::metrics {

Collector::Collector(SnapshotFn snapshot) : snapshot_(std::move(snapshot)) {}

std::vector<prometheus::MetricFamily> Collector::Collect() const {
  try {
    std::lock_guard lock(mu_);
    if (snapshot_) {
      Result<Snapshot> s = snapshot_();
      if (s.ok()) return snapshot_families(*s);
    }
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
