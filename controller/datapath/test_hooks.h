// SPDX-License-Identifier: GPL-2.0-only
// What tests and benchmarks do to a loaded data path that rld never does: run frames through the
// program (BPF_PROG_TEST_RUN), set the clock packets read, and read the last decision it traced
// (LoadOptions::trace_decisions).
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "rl_abi.h"

namespace rl {

class BpfDatapath;

class DatapathTestHooks {
 public:
  explicit DatapathTestHooks(const BpfDatapath& dp) : dp_(&dp) {}

  // Runs one frame through the program; returns the XDP action. With repeat > 1 the kernel runs
  // the same frame repeatedly and reports the mean time.
  struct RunResult {
    uint32_t action = 0;
    uint32_t duration_ns = 0;  // mean per run
  };
  // With `out`, also the frame as the program left it (rewritten, for XDP_TX).
  Result<RunResult> run(const std::vector<uint8_t>& frame, uint32_t repeat = 1,
                        std::vector<uint8_t>* out = nullptr) const;

  // The time packets read, in ns (CLOCK_MONOTONIC), instead of the kernel's clocks; 0: real time.
  void set_clock(uint64_t ns) const;
  // The last packet's decision (with LoadOptions::trace_decisions).
  rl_decision last_decision() const;

 private:
  const BpfDatapath* dp_;
};

}  // namespace rl
