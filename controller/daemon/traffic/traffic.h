// SPDX-License-Identifier: GPL-2.0-only
// `rlctl top --by traffic`: the data path samples 1 in 2^k packets of matched rules into
// rl_samples (bpf/lib/sample.h); rld keeps the heavy hitters of the samples per 10 s epoch, the
// current one and the one before, so that the figures describe the last 10 to 20 seconds, and
// scales them up by 2^k.
//
// The cost per sample is O(1) (heavy_hitters.h) and the ring is read in bounded batches, like
// the offender reports: a flood makes more samples, never slower ones, and the event loop keeps
// answering. Memory: two tables of kCapacity entries, 2 * kCapacity *
// HeavyHitters::kBytesPerEntry bytes (about 0.9 MiB), reserved at start.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "daemon/support/bounded_ring.h"
#include "daemon/traffic/heavy_hitters.h"
#include "rl_abi.h"

namespace rl::daemon {

struct TrafficEstimate {
  rl_key key{};
  uint64_t samples = 0;      // in both epochs; the true number lies within +- error
  uint64_t error = 0;        // from the tables' capacity (Space-Saving), in samples
  double sampled_bytes = 0;  // bytes of those samples (the key's mean frame length * samples)
  double dropped = 0;        // of the samples, the dropped ones (at the key's drop share)
};

struct TrafficView {
  std::vector<TrafficEstimate> keys;  // most samples first
  uint64_t samples = 0;               // every sample of both epochs
  uint64_t sampled_bytes = 0;
  uint64_t table_error = 0;  // a key not listed had at most this many samples
  double seconds = 0;        // the time both epochs cover, up to now
};

// The two epochs' tables. Pure: time comes in as an argument.
class TrafficWindows {
 public:
  using Clock = std::chrono::steady_clock;

  TrafficWindows(uint32_t capacity, Clock::duration epoch, Clock::time_point start, uint64_t seed);

  // Moves on to the epoch `now` falls in: the current table becomes the previous one, or both
  // are emptied when a whole epoch passed without a call.
  void advance(Clock::time_point now);
  // One sample, in the current epoch (advance() first).
  void add(const rl_key& k, uint32_t bytes, bool dropped) { cur_->add(k, bytes, dropped); }

  // The `n` keys with the most samples that `keep` accepts (by rule id), at `now`.
  TrafficView top(Clock::time_point now, size_t n,
                  const std::function<bool(uint32_t rule_id)>& keep) const;

 private:
  Clock::duration epoch_;
  Clock::time_point cur_start_, prev_start_;
  bool has_prev_ = false;
  std::unique_ptr<HeavyHitters> cur_, prev_;
};

// rl_samples, read on the event loop.
class TrafficLog {
 public:
  static constexpr uint32_t kBatch = 1024;     // samples per poll(), as for offender reports
  static constexpr uint32_t kCapacity = 4096;  // keys per epoch
  static constexpr std::chrono::seconds kEpoch{10};

  TrafficLog(int samples_fd, uint32_t shift);

  int epoll_fd() const { return ring_.epoll_fd(); }
  // Consumes at most kBatch samples; true when it stopped there (more may be waiting).
  bool poll();
  // One sample, as poll() hands it over from the ring; unit tests hand theirs in here.
  void add(const rl_traffic_sample& s);

  TrafficView top(size_t n, const std::function<bool(uint32_t rule_id)>& keep);
  uint32_t shift() const { return shift_; }

 private:
  uint32_t shift_;
  TrafficWindows windows_;
  BoundedRing ring_;  // last: its handler uses windows_
};

}  // namespace rl::daemon
