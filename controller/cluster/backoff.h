// SPDX-License-Identifier: GPL-2.0-only
// When to try reaching Redis again after a failure: exponential backoff with jitter, so a
// fleet that lost Redis at the same moment does not come back in lockstep, and a dead server
// costs each node a handful of connection attempts rather than one per call.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace rl::cluster {

class Backoff {
 public:
  using Clock = std::chrono::steady_clock;

  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds cap, uint64_t seed);

  bool ready(Clock::time_point now) const { return now >= next_; }
  std::chrono::milliseconds remaining(Clock::time_point now) const;
  // After the n-th failure in a row the next attempt waits initial * 2^(n-1), capped, and
  // drawn uniformly from [1/2, 1] of that. Returns the wait.
  std::chrono::milliseconds failed(Clock::time_point now);
  void succeeded();
  int failures() const { return failures_; }

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds cap_;
  std::mt19937_64 rng_;
  int failures_ = 0;
  Clock::time_point next_{};
};

}  // namespace rl::cluster
