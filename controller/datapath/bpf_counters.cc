// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/bpf_counters.h"

#include "rl_layout.h"
#include "rl_xdp.skel.h"

namespace rl {

BpfCounters::BpfCounters(const rl_xdp& skel)
    : global_(skel.maps.rl_global_stats),
      rules_(skel.maps.rl_rule_stats),
      limits_(skel.maps.rl_limit_stats),
      events_fd_(bpf_map__fd(skel.maps.rl_events)),
      samples_fd_(bpf_map__fd(skel.maps.rl_samples)) {}

Status BpfCounters::reset(const std::vector<uint32_t>& slots) const {
  for (uint32_t slot : slots) {
    if (auto s = rules_.reset(slot); !s) return s;
    for (uint32_t l = 0; l < RL_MAX_LIMITS; l++)
      if (auto s = limits_.reset(rl_limit_stats_index(slot, l)); !s) return s;
  }
  return {};
}

Result<GlobalCounters> BpfCounters::global_counters() const {
  GlobalCounters out{};
  for (uint32_t i = 0; i < RL_GC_MAX; i++) {
    auto v = global_.lookup(i);
    if (!v) return v.error();
    for (const auto& c : *v) {
      out[i].pkts += c.pkts;
      out[i].bytes += c.bytes;
    }
  }
  return out;
}

Result<rl_rule_counters> BpfCounters::rule_counters(uint32_t stats_slot) const {
  auto v = rules_.lookup(stats_slot);
  if (!v) return v.error();
  rl_rule_counters sum{};
  for (const auto& c : *v) {
    sum.passed_pkts += c.passed_pkts;
    sum.passed_bytes += c.passed_bytes;
    sum.dropped_pkts += c.dropped_pkts;
    sum.dropped_bytes += c.dropped_bytes;
    sum.monitored_pkts += c.monitored_pkts;
    sum.monitored_bytes += c.monitored_bytes;
  }
  // The data path does not write matched_* (rl_abi.h).
  sum.matched_pkts = sum.passed_pkts + sum.dropped_pkts;
  sum.matched_bytes = sum.passed_bytes + sum.dropped_bytes;
  return sum;
}

Result<LimitCounters> BpfCounters::limit_counters(uint32_t stats_slot) const {
  LimitCounters out{};
  for (uint32_t l = 0; l < RL_MAX_LIMITS; l++) {
    auto v = limits_.lookup(rl_limit_stats_index(stats_slot, l));
    if (!v) return v.error();
    for (const auto& c : *v) {
      out[l].pkts += c.pkts;
      out[l].bytes += c.bytes;
    }
  }
  return out;
}

}  // namespace rl
