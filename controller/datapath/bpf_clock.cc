// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/bpf_clock.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <optional>

#include "common/clock.h"
#include "rl_xdp.skel.h"

namespace rl {

uint64_t BpfClock::now_ns() const {
  uint64_t test = std::atomic_ref<__u64>(skel_->bss->rl_clock_override_ns).load();
  if (test) return test;
  LIBBPF_OPTS(bpf_test_run_opts, o);
  if (bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.rl_clock), &o) == 0)
    return std::atomic_ref<__u64>(skel_->bss->rl_clock_ns).load();
  timespec ts{};  // not reachable on kernels that load rl_xdp at all
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return timespec_ns(ts);
}

Result<BpfClock::Reading> BpfClock::read() const {
  LIBBPF_OPTS(bpf_test_run_opts, o);
  if (bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.rl_clock), &o) != 0)
    return errno_error("run rl_clock");
  const auto* bss = skel_->bss;
  Reading r;
  r.precise_ns = std::atomic_ref<const __u64>(bss->rl_clock_ns).load();
  r.packet_ns = std::atomic_ref<const __u64>(bss->rl_clock_packet_ns).load();
  r.jiffies = std::atomic_ref<const __u64>(bss->rl_clock_jiffies[0]).load();
  r.jiffies_steady = r.jiffies == std::atomic_ref<const __u64>(bss->rl_clock_jiffies[1]).load();
  r.jiffy_ns = std::atomic_ref<const __u64>(bss->rl_jiffy_ns).load();
  return r;
}

// Packets read the coarse clock as jiffies * tick + base (bpf/lib/clock.h). The tick is
// CLOCK_MONOTONIC_COARSE's resolution (the kernel's TICK_NSEC). Jiffy j starts at monotonic time
// j * tick + base: the kernel counts a jiffy once its boundary has passed, so every reading of
// the precise time t within jiffy j bounds the base from above, t - j * tick >= base, and the
// reading just after a boundary meets it. Readings run back to back until jiffies have moved
// twice (a whole jiffy seen, its start included); the smallest bound is the base, a few
// microseconds late. Tick and base are written before the program is attached, base first, so a
// packet never scales by a tick without its base. Without a tick, packets keep calling the
// kernel's coarse clock.
Status BpfClock::calibrate() {
  const std::optional<uint64_t> resolution = coarse_clock_resolution_ns();
  if (!resolution) return errno_error("resolution of CLOCK_MONOTONIC_COARSE");
  const uint64_t tick = *resolution;
  if (tick == 0 || tick > kMaxJiffyNs) return {};
  std::optional<uint64_t> base, first_jiffy;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(4 * tick) +
                        std::chrono::milliseconds(100);
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = read();
    if (!r) return r.error();
    if (!r->jiffies_steady) continue;  // a tick between the reads: which jiffy t fell in is unknown
    if (!first_jiffy) first_jiffy = r->jiffies;
    // Compared modulo 2^64: jiffies start near 2^32, so the base wraps.
    uint64_t b = r->precise_ns - r->jiffies * tick;
    if (!base || static_cast<int64_t>(b - *base) < 0) base = b;
    if (r->jiffies - *first_jiffy >= 2) break;
  }
  if (!base) return Error{EAGAIN, "the coarse clock: jiffies never held still"};
  std::atomic_ref<__u64>(skel_->bss->rl_jiffies_base_ns).store(*base);
  std::atomic_ref<__u64>(skel_->bss->rl_jiffy_ns).store(tick);
  return {};
}

}  // namespace rl
