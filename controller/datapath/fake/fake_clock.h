// SPDX-License-Identifier: GPL-2.0-only
// A Clock for unit tests: the time the test sets.
#pragma once

#include "datapath/datapath.h"

namespace rl::testing {

class FakeClock : public virtual Clock {
 public:
  uint64_t now_ns() const override { return now; }

  uint64_t now = 1'000'000'000'000;
};

}  // namespace rl::testing
