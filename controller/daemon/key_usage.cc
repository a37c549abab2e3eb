#include "daemon/key_usage.h"

#include <pthread.h>

namespace rl::daemon {

KeyUsageSampler::KeyUsageSampler(Count count, std::chrono::milliseconds every)
    : count_(std::move(count)), every_(every) {
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
  for (;;) {
    {
      MutexLock lock(mu_);
      if (wake_.wait_until(mu_, Clock::now() + every_, [this]() REQUIRES(mu_) { return stop_; }))
        return;
    }
    // Unlocked: readers get the previous count while this one is taken.
    auto [tracked, blocked] = count_();
    MutexLock lock(mu_);
    usage_ = {tracked, blocked, Clock::now()};
  }
}

}  // namespace rl::daemon
