// SPDX-License-Identifier: GPL-2.0-only
// The event loop's scheduling. Under a receive flood the kernel's packet work competes with rld
// for CPU: softirq work past its budget moves to ksoftirqd, and threaded NAPI runs in kernel
// threads, both SCHED_OTHER at nice 0. A control thread at a real-time priority (or a negative
// nice) is picked ahead of them, so `rlctl status`, signals and the watchdog ping do not wait
// behind the flood. Only the calling thread is raised; with SCHED_RESET_ON_FORK, threads and
// processes it starts later are back at SCHED_OTHER, nice 0.
#pragma once

#include <string>

#include "common/result.h"

namespace rl::daemon {

struct LoopPriority {
  int realtime = 0;  // SCHED_FIFO priority 1-99; 0: SCHED_OTHER at `nice`
  int nice = 0;      // -20..19, used when realtime is 0
};

// Applies `p` to the calling thread (needs CAP_SYS_NICE to raise it). Returns what is in
// force, as `rlctl status` shows it: "fifo 1", "nice -10", "nice 0".
Result<std::string> raise_loop_priority(const LoopPriority& p);

// What the calling thread runs at, in the same words.
std::string loop_priority_text();

}  // namespace rl::daemon
