// SPDX-License-Identifier: GPL-2.0-only
// A std::mutex the thread-safety analysis can see. libstdc++'s std::mutex and std::lock_guard
// carry no capability attributes, so GUARDED_BY members locked through them would all be
// reported; these thin wrappers add the attributes and nothing else.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "common/thread_annotations.h"

namespace rl {

class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the mutex is held where it cannot see the lock: in a callback that runs
  // under it. Checks nothing at run time.
  void assert_held() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// A condition variable waited on with its Mutex held, as the analysis sees it: the wait releases
// and retakes the mutex inside, so to the caller it stays held throughout.
class CondVar {
 public:
  // Waits until pred() or the deadline; pred() once more at the end, as std::condition_variable.
  // A pred that reads guarded members is declared REQUIRES(mu).
  template <class Clock, class Duration, class Pred>
  bool wait_until(Mutex& mu, const std::chrono::time_point<Clock, Duration>& deadline, Pred pred)
      REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    bool done = cv_.wait_until(lock, deadline, std::move(pred));
    lock.release();  // still held: the caller's MutexLock unlocks it
    return done;
  }
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace rl
