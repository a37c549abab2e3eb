#include "daemon/key_usage.h"

#include <pthread.h>

namespace rl::daemon {

KeyUsageSampler::KeyUsageSampler(Count count, std::chrono::milliseconds every)
    : count_(std::move(count)), every_(every) {
  auto [tracked, blocked] = count_();
  usage_ = {tracked, blocked, Clock::now()};
  thread_ = std::thread([this] { run(); });
  pthread_setname_np(thread_.native_handle(), "rld-key-usage");
}

KeyUsageSampler::~KeyUsageSampler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

KeyUsageSampler::Usage KeyUsageSampler::latest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}

void KeyUsageSampler::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, every_, [this] { return stop_; })) {
    lock.unlock();  // readers get the previous count while this one is taken
    auto [tracked, blocked] = count_();
    lock.lock();
    usage_ = {tracked, blocked, Clock::now()};
  }
}

}  // namespace rl::daemon
