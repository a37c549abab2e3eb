// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/key_usage.h"

#include <pthread.h>

#include <algorithm>

namespace rl::daemon {

KeyUsageSampler::KeyUsageSampler(Count count, std::chrono::milliseconds every, Between between,
                                 std::chrono::milliseconds between_every)
    : count_(std::move(count)),
      every_(every),
      between_(std::move(between)),
      between_every_(between_ && between_every.count() > 0 ? between_every : every) {
  auto [tracked, blocked] = count_();
  {
    MutexLock lock(mu_);
    usage_ = {tracked, blocked, Clock::now()};
  }
  thread_ = std::thread([this] { run(); });
  pthread_setname_np(thread_.native_handle(), "rld-key-usage");
}

KeyUsageSampler::~KeyUsageSampler() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

KeyUsageSampler::Usage KeyUsageSampler::latest() const {
  MutexLock lock(mu_);
  return usage_;
}

void KeyUsageSampler::run() {
  auto next_count = Clock::now() + every_;
  for (;;) {
    Usage latest;
    {
      MutexLock lock(mu_);
      auto wake = std::min(next_count, Clock::now() + between_every_);
      if (wake_.wait_until(mu_, wake, [this]() REQUIRES(mu_) { return stop_; })) return;
      latest = usage_;
    }
    if (Clock::now() < next_count) {
      if (between_) between_(latest);
      continue;
    }
    // Unlocked: readers get the previous count while this one is taken.
    auto [tracked, blocked] = count_();
    next_count = Clock::now() + every_;
    MutexLock lock(mu_);
    usage_ = {tracked, blocked, Clock::now()};
  }
}

}  // namespace rl::daemon
