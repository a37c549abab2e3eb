// SPDX-License-Identifier: GPL-2.0-only
// What a send loop reports, whichever engine sent the frames.
#pragma once

#include <cstdint>

namespace rl::rlflood {

struct RunSummary {
  uint64_t sent = 0;  // frames handed to the interface
  double seconds = 0;
  int cpu = -1;  // where the sender ran them (the caller pins it)
  // Paced: bursts that started more than one burst's interval late, and the schedule skipped
  // to stay within that lag rather than send the backlog at once, in frames (0 when it kept up).
  uint64_t late_bursts = 0, skipped = 0;
};

}  // namespace rl::rlflood
