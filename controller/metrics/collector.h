// SPDX-License-Identifier: GPL-2.0-only
// The Prometheus collectable behind /metrics: it reads a Snapshot at scrape time, so the numbers
// are as fresh as the scrape and nothing polls the kernel between scrapes.
#pragma once

#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "common/mutex.h"
#include "metrics/snapshot.h"

namespace rl::metrics {

class Collector : public prometheus::Collectable {
 public:
  explicit Collector(SnapshotFn snapshot);

  // Calls the SnapshotFn once. Never throws: it runs on the HTTP server's threads, where an
  // exception would end the process. A SnapshotFn that returns an error or throws gives a scrape
  // with rl_up 0 and rl_build_info only.
  std::vector<prometheus::MetricFamily> Collect() const override;

  // One SnapshotFn call, serialised with scrapes; an exception becomes an error.
  Result<Snapshot> snapshot() const;

 private:
  // Scrapes can arrive on several HTTP threads at once; serialising them here means the
  // SnapshotFn need not be reentrant.
  mutable Mutex mu_;
  SnapshotFn snapshot_ GUARDED_BY(mu_);
};

}  // namespace rl::metrics
