// SPDX-License-Identifier: GPL-2.0-only
// Counters and events: the per-CPU counters packets write (global, per rule, per stacked limit),
// summed for rld, and the ring buffers that carry reports and traffic samples to it.
#pragma once

#include <cstdint>
#include <vector>

#include "datapath/datapath.h"
#include "datapath/map.h"

struct rl_xdp;

namespace rl {

class BpfCounters final : public Counters {
 public:
  explicit BpfCounters(const rl_xdp& skel);

  Result<GlobalCounters> global_counters() const override;
  Result<rl_rule_counters> rule_counters(uint32_t stats_slot) const override;
  Result<LimitCounters> limit_counters(uint32_t stats_slot) const override;

  // Zeroes the counters of stats slots a rule set uses for the first time.
  Status reset(const std::vector<uint32_t>& slots) const;

  int events_fd() const { return events_fd_; }    // rl_events ring buffer
  int samples_fd() const { return samples_fd_; }  // rl_samples ring buffer (traffic samples)

 private:
  PerCpuArrayRef<rl_counter> global_;
  PerCpuArrayRef<rl_rule_counters> rules_;
  PerCpuArrayRef<rl_counter> limits_;
  int events_fd_;
  int samples_fd_;
};

}  // namespace rl
