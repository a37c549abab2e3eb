// SPDX-License-Identifier: GPL-2.0-only
#include "ring_run.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "lab/clock.h"

namespace rl::rlflood {
namespace {

using lab::Nanos;
using lab::now_ns;

// A slot holds its TPACKET_V2 header and a frame of up to 1500 bytes; the ring holds at least
// two of the largest bursts, so a burst never waits for the one before it.
constexpr uint32_t kSlotBytes = 2048;
constexpr uint32_t kBlockBytes = 1u << 16;
constexpr uint32_t kMinSlots = 1024;
// Where the kernel reads a slot's frame (tpacket_parse_header without PACKET_TX_HAS_OFF).
constexpr size_t kDataOffset = TPACKET2_HDRLEN - sizeof(sockaddr_ll);

uint32_t slots_for(uint32_t burst) {
  uint32_t n = kMinSlots;
  while (n < 2 * burst) n *= 2;
  return n;
}

// An AF_PACKET socket with its transmit ring mapped. Every slot starts as a copy of the
// template; flood_frame_write() then only rewrites the fields that differ. The kernel reads a
// slot while its status is SEND_REQUEST or SENDING (and the receiver may hold its pages until
// it frees the frame); the slot is the sender's again once the status is back to AVAILABLE.
class TxRing {
 public:
  static Result<std::unique_ptr<TxRing>> open(const FloodPlan& flood, int ifindex, uint32_t slots) {
    std::unique_ptr<TxRing> r(new TxRing(flood, slots));
    // Protocol 0: a send-only socket, so the kernel never queues received frames on it.
    r->fd_ = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (r->fd_ < 0) return errno_error("AF_PACKET socket (needs CAP_NET_RAW)");
    int version = TPACKET_V2, one = 1;
    if (setsockopt(r->fd_, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) != 0)
      return errno_error("PACKET_VERSION TPACKET_V2");
    if (setsockopt(r->fd_, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) != 0)
      return errno_error("PACKET_QDISC_BYPASS");
    // Frames the receiver has not taken yet count against the send buffer: room for a ring's
    // worth of them, so that a full send buffer is not what paces the flood.
    int sndbuf = static_cast<int>(slots) * 4096;
    if (setsockopt(r->fd_, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) != 0)
      setsockopt(r->fd_, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    tpacket_req req{};
    req.tp_block_size = kBlockBytes;
    req.tp_frame_size = kSlotBytes;
    req.tp_block_nr = slots / (kBlockBytes / kSlotBytes);
    req.tp_frame_nr = slots;
    if (setsockopt(r->fd_, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)) != 0)
      return errno_error("PACKET_TX_RING of " + std::to_string(slots) + " slots");
    r->bytes_ = size_t{req.tp_block_nr} * kBlockBytes;
    void* map = mmap(nullptr, r->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd_, 0);
    if (map == MAP_FAILED) return errno_error("mmap the packet ring");
    r->ring_ = static_cast<uint8_t*>(map);
    for (uint32_t i = 0; i < slots; i++)
      std::memcpy(r->data(i), flood.frame.data(), flood.frame.size());

    r->to_.sll_family = AF_PACKET;
    r->to_.sll_ifindex = ifindex;
    r->to_.sll_protocol = htons(flood.v6() ? ETH_P_IPV6 : ETH_P_IP);
    r->to_.sll_halen = ETH_ALEN;
    std::memcpy(r->to_.sll_addr, flood.frame.data(), ETH_ALEN);  // unused by SOCK_RAW
    return r;
  }

  ~TxRing() {
    if (ring_) munmap(ring_, bytes_);
    if (fd_ >= 0) close(fd_);
  }
  TxRing(const TxRing&) = delete;
  TxRing& operator=(const TxRing&) = delete;

  int fd() const { return fd_; }

  // Writes frame n into the next slot and queues it; false when the kernel still has the slot.
  bool put(uint64_t n) {
    tpacket2_hdr* h = header(head_);
    uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
    if (status != TP_STATUS_AVAILABLE) {
      if (status & TP_STATUS_WRONG_FORMAT) wrong_format_ = true;
      return false;
    }
    flood_frame_write(&spec_, data(head_), n);
    h->tp_len = frame_len_;
    __atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
    head_ = head_ + 1 == slots_ ? 0 : head_ + 1;
    queued_++;
    return true;
  }

  // Hands the queued slots to the kernel. A frame the interface refused (a full receive ring)
  // stays queued and goes with the next call, so a refusal is not an error.
  Status kick() {
    ssize_t r =
        sendto(fd_, nullptr, 0, MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&to_), sizeof(to_));
    if (r >= 0 || errno == EAGAIN || errno == ENOBUFS || errno == EINTR) return {};
    return errno_error("send from the packet ring on ifindex " + std::to_string(to_.sll_ifindex));
  }

  // Waits up to timeout_ms for the kernel to hand a slot back.
  void wait_for_slot(int timeout_ms) const {
    pollfd p{fd_, POLLOUT, 0};
    poll(&p, 1, timeout_ms);
  }

  // Slots the kernel has not handed back yet.
  uint32_t outstanding() const {
    uint32_t n = 0;
    for (uint32_t i = 0; i < slots_; i++)
      if (__atomic_load_n(&header(i)->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE) n++;
    return n;
  }

  uint64_t queued() const { return queued_; }
  bool wrong_format() const { return wrong_format_; }

 private:
  TxRing(const FloodPlan& flood, uint32_t slots)
      : spec_(flood.spec), slots_(slots), frame_len_(static_cast<uint32_t>(flood.frame.size())) {}

  tpacket2_hdr* header(uint32_t i) const {
    return reinterpret_cast<tpacket2_hdr*>(ring_ + size_t{i} * kSlotBytes);
  }
  uint8_t* data(uint32_t i) const { return ring_ + size_t{i} * kSlotBytes + kDataOffset; }

  flood_frame_spec spec_;
  uint32_t slots_, frame_len_;
  int fd_ = -1;
  uint8_t* ring_ = nullptr;
  size_t bytes_ = 0;
  sockaddr_ll to_{};
  uint32_t head_ = 0;
  uint64_t queued_ = 0;
  bool wrong_format_ = false;
};

void sleep_until(Nanos t) {
  timespec ts{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // a signal ends it early
}

}  // namespace

Result<RunSummary> run_ring(const FloodPlan& flood, const RingPlan& plan,
                            const std::atomic<bool>& stop) {
  if (flood.frame.size() + kDataOffset > kSlotBytes)
    return Error{0, "a " + std::to_string(flood.frame.size()) + "-byte frame exceeds a ring slot"};
  auto ring = TxRing::open(flood, plan.ifindex, slots_for(plan.burst));
  if (!ring) return ring.error();
  TxRing& r = **ring;
  // Bursts are due a millisecond or less apart: the default timer slack (50 us) would blur them.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  RunSummary out;
  const Nanos start = now_ns();
  const Nanos deadline = start + static_cast<Nanos>(plan.max_seconds * 1e9);
  const Nanos interval = static_cast<Nanos>(plan.interval_ns);
  Nanos due = start;
  Nanos skipped_ns = 0;
  auto running = [&] { return !stop.load(std::memory_order_relaxed) && now_ns() < deadline; };

  while (r.queued() < plan.count && running()) {
    uint64_t want = std::min<uint64_t>(interval ? plan.burst : plan.batch, plan.count - r.queued());
    if (interval) {
      if (now_ns() < due) sleep_until(due);
      if (!running()) break;
      // Late by more than an interval: start again from now rather than send the backlog at
      // once, which would overflow the receiver's ring (as rlflood.bpf.c does).
      Nanos now = now_ns();
      if (now - due > interval) {
        out.late_bursts++;
        skipped_ns += now - due;
        due = now;
      }
      due += interval;
    }
    // Paced, the whole burst goes, waiting for slots if the receiver is behind; unpaced, what
    // the ring has room for.
    for (uint64_t put = 0; put < want;) {
      if (r.put(r.queued())) {
        put++;
        continue;
      }
      if (r.wrong_format()) return Error{0, "the kernel refused a frame of the packet ring"};
      if (auto s = r.kick(); !s) return s.error();
      if (!interval && put > 0) break;
      if (!running()) break;
      r.wait_for_slot(1);
    }
    if (auto s = r.kick(); !s) return s.error();
  }

  // What is still queued goes out while the receiver drains, within a bound.
  const Nanos drain_until = now_ns() + 1'000'000'000;
  uint32_t left = r.outstanding();
  while (left > 0 && now_ns() < drain_until && !stop.load(std::memory_order_relaxed)) {
    if (auto s = r.kick(); !s) return s.error();
    r.wait_for_slot(1);
    left = r.outstanding();
  }
  if (r.wrong_format()) return Error{0, "the kernel refused a frame of the packet ring"};
  out.sent = r.queued() - left;
  out.seconds = static_cast<double>(now_ns() - start) / 1e9;
  out.cpu = sched_getcpu();
  if (interval)
    out.skipped = static_cast<uint64_t>(static_cast<double>(skipped_ns) /
                                        static_cast<double>(interval) * plan.burst);
  return out;
}

}  // namespace rl::rlflood
