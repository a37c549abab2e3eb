// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/backoff.h"

#include <algorithm>

namespace rl::cluster {

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds cap, uint64_t seed)
    : initial_(std::max(initial, std::chrono::milliseconds(1))),
      cap_(std::max(cap, initial_)),
      rng_(seed) {}

std::chrono::milliseconds Backoff::remaining(Clock::time_point now) const {
  if (now >= next_) return std::chrono::milliseconds(0);
  return std::chrono::ceil<std::chrono::milliseconds>(next_ - now);
}

std::chrono::milliseconds Backoff::failed(Clock::time_point now) {
  // Doubling stops at the cap, which also keeps the shift small.
  auto delay = initial_;
  for (int i = 0; i < failures_ && delay < cap_; i++) delay *= 2;
  delay = std::min(delay, cap_);
  if (failures_ < 64) failures_++;
  std::uniform_int_distribution<int64_t> half(delay.count() / 2, delay.count());
  auto wait = std::chrono::milliseconds(half(rng_));
  next_ = now + wait;
  return wait;
}

void Backoff::succeeded() {
  failures_ = 0;
  next_ = Clock::time_point{};
}

}  // namespace rl::cluster
