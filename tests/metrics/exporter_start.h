// SPDX-License-Identifier: GPL-2.0-only
// Starting an exporter in a test: on a free loopback port, serving the snapshots a function
// returns.
#pragma once

#include <gtest/gtest.h>

#include <utility>

#include "metrics/exporter.h"

namespace rl::testing {

// The exporter started; a test failure, and an exception that ends the test, if it did not start.
inline metrics::Exporter start_or_die(metrics::SnapshotFn fn) {
  auto e = metrics::Exporter::start("127.0.0.1:0", std::move(fn));
  if (!e) ADD_FAILURE() << e.error().str();
  return std::move(e).value();
}

}  // namespace rl::testing
