// SPDX-License-Identifier: GPL-2.0-only
#include "live_run.h"

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>

namespace rl::rlflood {
namespace {

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Calls long enough that their fixed cost is small, short enough that the time bound and a
// signal are honoured within a fraction of a second.
constexpr double kCallSeconds = 0.2;
constexpr uint64_t kFirstChunk = 1u << 14, kMaxChunk = 1u << 26;

struct Shared {
  const std::vector<uint8_t>& frame;
  const RunPlan& plan;
  const std::atomic<bool>& stop;
  xdp_md ctx{};
  double start = 0, deadline = 0;
  uint64_t first = 0;                // the program's frame count at the start
  std::atomic<uint64_t> claimed{0};  // frames promised to calls so far, at most plan.count
  std::mutex mu;
  std::optional<Error> error;
};

// Claims up to want frames of what is left; 0 when none are.
uint64_t claim(Shared& s, uint64_t want) {
  uint64_t have = s.claimed.load();
  for (;;) {
    if (have >= s.plan.count) return 0;
    uint64_t take = std::min(want, s.plan.count - have);
    if (s.claimed.compare_exchange_weak(have, have + take)) return take;
  }
}

bool call(Shared& s, uint64_t repeat) {
  LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = s.frame.data(),
              .data_size_in = static_cast<uint32_t>(s.frame.size()), .ctx_in = &s.ctx,
              .ctx_size_in = sizeof(s.ctx), .repeat = static_cast<int>(repeat),
              .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = s.plan.batch);
  if (bpf_prog_test_run_opts(s.plan.prog_fd, &opts) == 0 || errno == EINTR) return true;
  std::lock_guard lock(s.mu);
  if (!s.error)
    s.error =
        errno_error("BPF_PROG_TEST_RUN (live frames) on ifindex " + std::to_string(s.plan.ifindex));
  return false;
}

bool should_stop(Shared& s) {
  if (s.stop.load(std::memory_order_relaxed) || now_s() >= s.deadline) return true;
  std::lock_guard lock(s.mu);
  return s.error.has_value();
}

// The next call's repeat count, after a call of `repeat` that started at t0: about kCallSeconds
// long, and none running much past the deadline. Doubling and halving rather than a rate
// estimate: a call's fixed cost varies too much.
uint64_t next_chunk(const Shared& s, uint64_t chunk, uint64_t repeat, double t0) {
  double took = now_s() - t0, left = s.deadline - now_s();
  if (took < kCallSeconds) chunk = std::min(chunk * 2, kMaxChunk);
  if (took > 2 * kCallSeconds && chunk > 1) chunk /= 2;
  if (left > 0 && took > 0)
    chunk = std::clamp<uint64_t>(
        std::min<uint64_t>(chunk,
                           static_cast<uint64_t>(static_cast<double>(repeat) / took * left) + 1),
        1, kMaxChunk);
  return chunk;
}

void unpaced(Shared& s) {
  uint64_t chunk = kFirstChunk;
  while (!should_stop(s)) {
    uint64_t repeat = claim(s, chunk);
    if (repeat == 0) return;
    double t0 = now_s();
    if (!call(s, repeat)) return;
    chunk = next_chunk(s, chunk, repeat, t0);
  }
}

// Keeps the program in the kernel's XDP dispatcher while paced calls come and go, so they do not
// each pay for adding and removing it (RunPlan::threads). It runs the program on a frame too short
// to rewrite, which the program aborts without counting or sending, until told to stop.
class DispatcherKeeper {
 public:
  DispatcherKeeper(int prog_fd, const volatile __u64* stub_runs) {
    struct sigaction sa {};
    sa.sa_handler = [](int) {};  // only to interrupt the call: no SA_RESTART
    sigaction(SIGUSR1, &sa, nullptr);
    thread_ = std::thread([this, prog_fd] {
      // Never real-time, even when the sender is: it would keep the sender off the CPU.
      sched_param normal{};
      pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal);
      std::vector<uint8_t> stub(14);  // an Ethernet header and nothing else
      while (!done_.load()) {
        LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = stub.data(),
                    .data_size_in = static_cast<uint32_t>(stub.size()), .repeat = 1 << 30);
        if (bpf_prog_test_run_opts(prog_fd, &opts) != 0 && errno != EINTR) break;
      }
      exited_.store(true);
    });
    // Once its call runs, the keeper drops to the lowest priority, so that the sender on the same
    // CPU gets the CPU back as soon as its sleep ends; descheduled inside its call, the keeper
    // still holds the program in the dispatcher. Before that it competes as usual, so that it
    // gets in even on a busy CPU (bounded: 5 s, then the calls pay for the dispatcher).
    for (int i = 0; stub_runs && *stub_runs == 0 && !exited_.load() && i < 5000; i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    sched_param idle{};
    pthread_setschedparam(thread_.native_handle(), SCHED_IDLE, &idle);
  }
  ~DispatcherKeeper() {
    done_.store(true);
    while (!exited_.load()) {  // a signal ends the call; repeat in case it came just before it
      pthread_kill(thread_.native_handle(), SIGUSR1);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    thread_.join();
  }
  DispatcherKeeper(const DispatcherKeeper&) = delete;
  DispatcherKeeper& operator=(const DispatcherKeeper&) = delete;

 private:
  std::atomic<bool> done_{false}, exited_{false};
  std::thread thread_;
};

// The program paces itself (rlflood.bpf.c): it sends a burst when one is due and drops frames
// in between, so the kernel busy-waits inside long calls, as unpaced. One thread sends (the
// program's pacing state is not shared between CPUs); the keeper holds the program in the
// dispatcher so that the calls do not each wait for an RCU grace period.
void paced(Shared& s) {
  DispatcherKeeper keeper(s.plan.prog_fd, s.plan.stub_runs);
  uint64_t chunk = kFirstChunk;
  while (!should_stop(s) && *s.plan.frames_done - s.first < s.plan.count) {
    double t0 = now_s();
    if (!call(s, chunk)) return;
    chunk = next_chunk(s, chunk, chunk, t0);
  }
}

}  // namespace

Result<RunSummary> run_live(const std::vector<uint8_t>& frame, const RunPlan& plan,
                            const volatile __u64& frames_done, const std::atomic<bool>& stop) {
  Shared s{frame, plan, stop};
  // The frame "arrives" on the sending interface's queue 0; XDP_TX sends it back out of it.
  s.ctx.data_end = static_cast<uint32_t>(frame.size());
  s.ctx.ingress_ifindex = static_cast<uint32_t>(plan.ifindex);
  s.ctx.rx_queue_index = 0;

  RunSummary out;
  const uint64_t first = frames_done;
  s.first = first;
  s.start = now_s();
  s.deadline = s.start + plan.max_seconds;
  if (plan.rate) {
    paced(s);
  } else {
    std::vector<std::thread> workers;
    for (int i = 1; i < plan.threads; i++) workers.emplace_back([&s] { unpaced(s); });
    unpaced(s);
    for (auto& w : workers) w.join();
  }
  if (s.error) return *s.error;
  out.sent = frames_done - first;
  out.seconds = now_s() - s.start;
  out.cpu = sched_getcpu();
  return out;
}

}  // namespace rl::rlflood
