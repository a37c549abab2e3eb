// How full the key table is, read by a thread of its own once a second. Counting means reading
// the table (16 MiB by default, a few milliseconds, longer while a flood contends for memory),
// which neither the event loop nor a metrics scrape should wait for: `rlctl status` and the
// scrape read the latest count instead.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>

#include "common/mutex.h"

namespace rl::daemon {

class KeyUsageSampler {
 public:
  using Clock = std::chrono::steady_clock;
  using Count = std::function<std::pair<uint64_t, uint64_t>()>;  // {tracked, blocked}
  struct Usage {
    uint64_t tracked = 0, blocked = 0;
    Clock::time_point at;
  };

  // Counts once before returning, so the first reading is a real one.
  KeyUsageSampler(Count count, std::chrono::milliseconds every);
  ~KeyUsageSampler();
  KeyUsageSampler(const KeyUsageSampler&) = delete;
  KeyUsageSampler& operator=(const KeyUsageSampler&) = delete;

  Usage latest() const;

 private:
  void run();

  Count count_;
  std::chrono::milliseconds every_;
  mutable Mutex mu_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mu_) = false;
  Usage usage_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace rl::daemon
