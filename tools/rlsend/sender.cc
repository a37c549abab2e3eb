// SPDX-License-Identifier: GPL-2.0-only
#include "sender.h"

#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "lab/clock.h"

namespace rl::rlsend {
namespace {

using lab::Nanos;
using lab::now_ns;

// Sleeping is coarse (timer slack, wake-up latency of tens of microseconds), spinning is exact
// but burns a core: sleep until shortly before the slot, then spin to it.
void wait_until(Nanos t, const std::atomic<bool>& stop) {
  constexpr Nanos kSpin = 100'000;
  Nanos left = t - now_ns();
  if (left > kSpin) {
    Nanos wake = t - kSpin;
    timespec ts{static_cast<time_t>(wake / 1'000'000'000), static_cast<long>(wake % 1'000'000'000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
      if (stop.load(std::memory_order_relaxed)) return;  // a signal ends a long gap at once
    }
  }
  while (now_ns() < t) {
  }
}

}  // namespace

std::string Summary::json() const {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "{\"sent\":%llu,\"errors\":%llu,\"seconds\":%.6f}",
                static_cast<unsigned long long>(sent), static_cast<unsigned long long>(errors),
                seconds);
  return buf;
}

Result<Summary> send_frames(const std::vector<Frame>& frames, const SendPlan& plan,
                            const std::atomic<bool>& stop) {
  // Protocol 0: a send-only socket, so the kernel never queues received frames on it.
  int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno_error("AF_PACKET socket (needs CAP_NET_RAW)");

  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = plan.ifindex;
  to.sll_halen = ETH_ALEN;
  std::memcpy(to.sll_addr, plan.dst_mac.data(), ETH_ALEN);

  Summary s;
  const Nanos start = now_ns();
  const Nanos deadline = start + static_cast<Nanos>(plan.max_seconds * 1e9);
  const double gap_ns = plan.rate ? 1e9 / static_cast<double>(plan.rate) : 0;
  size_t next = 0;
  for (uint64_t n = 0; n < plan.count && !stop.load(std::memory_order_relaxed); n++) {
    if (plan.rate) {
      Nanos slot = start + static_cast<Nanos>(gap_ns * static_cast<double>(n));
      if (slot >= deadline) break;
      wait_until(slot, stop);
    }
    if (now_ns() >= deadline) break;
    const Frame& f = frames[next];
    next = next + 1 == frames.size() ? 0 : next + 1;
    ssize_t r = sendto(fd, f.data(), f.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
    if (r == static_cast<ssize_t>(f.size())) {
      s.sent++;
    } else {
      if (s.errors++ == 0) s.first_error = r < 0 ? std::strerror(errno) : "short write";
    }
  }
  s.seconds = static_cast<double>(now_ns() - start) / 1e9;
  close(fd);
  return s;
}

}  // namespace rl::rlsend
