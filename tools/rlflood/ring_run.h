// SPDX-License-Identifier: GPL-2.0-only
// The packet ring engine: the same flood as live frames (flood_frame.bpf.h makes each frame), sent
// from an AF_PACKET socket's transmit ring (PACKET_TX_RING, TPACKET_V2), bypassing the qdisc as
// an XDP_TX frame does. It is for kernels that refuse live frames (BPF_PROG_TEST_RUN with
// BPF_F_TEST_XDP_LIVE_FRAMES); it costs the sending CPU more per frame, so an unpaced flood from
// it offers fewer frames a second.
//
// A veth hands a ring frame to its peer's NAPI, where the peer's XDP program runs, when the
// sending end has TSO off or the peer has an XDP program (veth_skb_is_eligible_for_gro); else
// the frame takes the peer's backlog on the sending CPU, past any native XDP program.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/result.h"
#include "flood_plan.h"
#include "run_summary.h"

namespace rl::rlflood {

struct RingPlan {
  int ifindex = 0;
  uint64_t count = 0;
  double max_seconds = 0;
  // Paced when interval_ns > 0: a burst of `burst` frames every interval_ns, as the XDP
  // program paces live frames. Unpaced: `batch` frames per send() at most.
  uint64_t interval_ns = 0;
  uint32_t burst = 64;
  uint32_t batch = 64;
};

Result<RunSummary> run_ring(const FloodPlan& flood, const RingPlan& plan,
                            const std::atomic<bool>& stop);

}  // namespace rl::rlflood
