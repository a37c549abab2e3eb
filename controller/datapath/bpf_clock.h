// SPDX-License-Identifier: GPL-2.0-only
// The data path's clock: CLOCK_MONOTONIC as packets read it (the rl_clock program), and the
// calibration of the coarse clock packets scale from jiffies (bpf/lib/clock.h).
#pragma once

#include <cstdint>

#include "common/result.h"
#include "datapath/datapath.h"

struct rl_xdp;

namespace rl {

class BpfClock final : public Clock {
 public:
  explicit BpfClock(rl_xdp& skel) : skel_(&skel) {}

  // CLOCK_MONOTONIC as the data path reads it (bpf_ktime_get_ns), whatever this process's
  // time namespace; the test clock when one is set.
  uint64_t now_ns() const override;

  // One run of the data path's clock program: the precise clock (bpf_ktime_get_ns), the coarse
  // clock as packets read it (jiffies scaled, bpf/lib/clock.h), and the tick packets scale by
  // (0 if they call the kernel's coarse clock instead).
  struct Reading {
    uint64_t precise_ns = 0;
    uint64_t packet_ns = 0;
    uint64_t jiffies = 0;  // read on both sides of precise_ns, the same value
    bool jiffies_steady = false;
    uint64_t jiffy_ns = 0;
  };
  Result<Reading> read() const;

  // A coarse clock with a longer tick than this (HZ below 10) is not a jiffy: packets then call
  // the kernel's coarse clock.
  static constexpr uint64_t kMaxJiffyNs = 100'000'000;

  // Gives packets the coarse clock's tick and base, before the program is attached.
  Status calibrate();

 private:
  rl_xdp* skel_;
};

}  // namespace rl
