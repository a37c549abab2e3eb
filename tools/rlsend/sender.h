// SPDX-License-Identifier: GPL-2.0-only
// The send loop: writes frames round-robin on an AF_PACKET socket, paced to a rate, and stops by
// itself after the count, the time bound or a stop request, whichever comes first.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "frames.h"

namespace rl::rlsend {

struct Summary {
  uint64_t sent = 0;
  uint64_t errors = 0;
  double seconds = 0;
  std::string first_error;  // empty when every send succeeded

  std::string json() const;
};

struct SendPlan {
  int ifindex = 0;
  Mac dst_mac{};
  uint64_t count = 0;
  uint64_t rate = 0;  // 0: unpaced
  double max_seconds = 0;
};

Result<Summary> send_frames(const std::vector<Frame>& frames, const SendPlan& plan,
                            const std::atomic<bool>& stop);

}  // namespace rl::rlsend
