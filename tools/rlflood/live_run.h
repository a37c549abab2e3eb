// SPDX-License-Identifier: GPL-2.0-only
// The send loop: BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES, called again and again until
// the frame count, the time bound or a stop request, whichever comes first.
#pragma once

#include <linux/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "run_summary.h"

namespace rl::rlflood {

struct RunPlan {
  int prog_fd = -1;
  int ifindex = 0;  // the frames "arrive" here, so XDP_TX sends them out of it
  uint64_t count = 0;
  uint64_t rate = 0;  // 0: unpaced
  double max_seconds = 0;
  uint32_t batch = 64;
  // Unpaced, several threads take turns on the CPU: every call adds the program to the kernel's
  // XDP dispatcher on entry and removes it on exit, each a text patch that sleeps for an RCU grace
  // period (tens of ms on a busy machine). While one call is running the program stays in, so
  // with two threads the frames keep flowing through the other's entry and exit. Paced, one
  // thread sends and another keeps the program in the dispatcher.
  int threads = 2;
  // Paced: the program sends bursts of at most this many frames, each when it is due (rate
  // frames per second on average), and drops its frames in between (rlflood.bpf.c).
  uint32_t burst = 64;
  // Paced: the program's count of runs on the keeper's stub frame (0 until the keeper's call has
  // entered the kernel); null: no wait.
  const volatile __u64* stub_runs = nullptr;
  // The program's count of frames sent (the same as run_live's frames_done).
  const volatile __u64* frames_done = nullptr;
};

// frames_done reads the program's own frame counter, which is exact even when a call is cut short.
Result<RunSummary> run_live(const std::vector<uint8_t>& frame, const RunPlan& plan,
                            const volatile __u64& frames_done, const std::atomic<bool>& stop);

}  // namespace rl::rlflood
