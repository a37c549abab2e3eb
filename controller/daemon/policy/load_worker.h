// SPDX-License-Identifier: GPL-2.0-only
// Policy loads off the event loop. Parsing a large or hostile policy takes a second or more; on
// the loop thread that would stall rlctl, signals, the offender log and inotify. Jobs run one
// at a time on a worker thread, each with a time limit counted from its start:
// - `start` runs on the loop thread just before the job's thread starts (inputs that depend on
//   earlier jobs, such as the fingerprint in force, are taken there);
// - `work` runs on the worker thread and touches only what its closure owns;
// - `done` runs on the loop thread exactly once: when the work ended (timed_out false), or at
//   the time limit (timed_out true). A late job's result is then dropped when its work ends.
// The next job starts only once the running one's thread has ended and been joined, so two
// loads never race and at most one load's memory is in use; the destructor joins the thread.
// A job cannot be killed, so its work must stop by itself soon after the limit: the loader
// checks the same deadline (policy::LoadLimits) and bounds its input.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <thread>

#include "common/fd.h"

namespace rl::daemon {

class LoadWorker {
 public:
  using Clock = std::chrono::steady_clock;
  struct Job {
    std::function<void()> start;               // on the loop thread, before work
    std::function<void()> work;                // on the worker thread
    std::function<void(bool timed_out)> done;  // on the loop thread, once
    Clock::duration timeout{};
  };

  LoadWorker();
  ~LoadWorker();  // waits for a running job's thread
  LoadWorker(const LoadWorker&) = delete;
  LoadWorker& operator=(const LoadWorker&) = delete;

  void submit(Job job);
  // Readable when a job's work ended; the loop then calls on_ready().
  int fd() const { return event_.get(); }
  void on_ready();
  // Answers the running job as timed out once its time limit passed. The loop calls it after
  // every wakeup.
  void check_deadline();
  // When check_deadline() next has something to do, for the loop's wait.
  std::optional<Clock::time_point> deadline() const;
  // A job's thread runs (possibly one already answered as timed out).
  bool running() const { return thread_.joinable(); }
  // Blocks the calling (loop) thread until `done` ran for every job submitted so far, serving
  // on_ready and check_deadline: rld's first load, before the loop runs.
  void drain();

 private:
  void start_next();

  UniqueFd event_;
  std::deque<Job> queue_;
  std::thread thread_;
  Job current_;
  bool answered_ = false;  // current_.done already ran (timed out)
  Clock::time_point deadline_{};
  std::atomic<bool> finished_{false};
};

}  // namespace rl::daemon
