// SPDX-License-Identifier: GPL-2.0-only
// How full the key table is, read by a thread of its own once a second. Counting means reading
// the table (16 MiB by default, a few milliseconds, longer while a flood contends for memory),
// which neither the event loop nor a metrics scrape should wait for: `rlctl status` and the
// scrape read the latest count instead. Between counts the same thread may take a cheaper look
// more often (rld: the keys inserted since the count, to grow the table before the next one).
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

  // Runs every `between_every` from one count to the next, with the latest count.
  using Between = std::function<void(const Usage&)>;

  // Counts once before returning, so the first reading is a real one. Without `between` (or
  // with between_every zero), the thread only counts.
  KeyUsageSampler(Count count, std::chrono::milliseconds every, Between between = {},
                  std::chrono::milliseconds between_every = std::chrono::milliseconds(0));
  ~KeyUsageSampler();
  KeyUsageSampler(const KeyUsageSampler&) = delete;
  KeyUsageSampler& operator=(const KeyUsageSampler&) = delete;

  Usage latest() const;

 private:
  void run();

  Count count_;
  std::chrono::milliseconds every_;
  Between between_;
  std::chrono::milliseconds between_every_;
  mutable Mutex mu_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mu_) = false;
  Usage usage_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace rl::daemon
