// SPDX-License-Identifier: GPL-2.0-only
// The /metrics HTTP endpoint: a prometheus-cpp Exposer serving a Collector. rld owns one for as
// long as it runs; scrapes call the SnapshotFn on the server's own threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "metrics/snapshot.h"

namespace prometheus {
class Exposer;
}

namespace rl::metrics {

class Collector;

// Loopback only by default: the metrics name rules and interfaces, which is nobody else's
// business unless the operator says so.
inline constexpr char kDefaultListenAddress[] = "127.0.0.1:9464";

class Exporter {
 public:
  // Listens on `address`, "IPv4:port" or a bare port (all interfaces); port 0 takes a free port,
  // see port(). The SnapshotFn must be callable from another thread; calls never overlap.
  // The server's threads run at SCHED_FIFO `realtime_priority` (0: the default class; above 0
  // needs CAP_SYS_NICE), so scrapes are answered ahead of the kernel threads a receive flood
  // keeps busy and of other work. Every Exporter of the process shares the last value given.
  static Result<Exporter> start(const std::string& address, SnapshotFn snapshot,
                                int realtime_priority = 0);

  Exporter(Exporter&&) noexcept;
  Exporter& operator=(Exporter&&) noexcept;
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;
  // Stops the server and returns once no scrape is running.
  ~Exporter();

  // The TCP port the server listens on, 0 for a moved-from Exporter.
  uint16_t port() const;

 private:
  Exporter(std::shared_ptr<Collector> collector, std::unique_ptr<prometheus::Exposer> exposer,
           uint32_t wake_addr);
  void stop() noexcept;

  // Declared first so it is destroyed after the exposer, whose destructor waits for running
  // scrapes.
  std::shared_ptr<Collector> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  uint32_t wake_addr_ = 0;  // IPv4, network order: where stop() connects to wake the server
};

}  // namespace rl::metrics
