// SPDX-License-Identifier: GPL-2.0-only
// Child processes for tests (senders and sinks in the lab, rld, Redis, Prometheus, promtool):
// every one runs in its own process group, has a bounded lifetime and is killed with its whole
// group when its owner goes away, so a failing test cannot leave one running.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace rl::testing {

using namespace std::chrono_literals;

// What a finished command left behind.
struct Output {
  int code = -1;  // exit code; 128 + N when killed by signal N; -1 when it never ran
  bool timed_out = false;
  std::string out, err;

  bool ok() const { return code == 0 && !timed_out; }
  std::string describe() const;  // for assertion messages: code, timeout, stderr
};

class Process {
 public:
  // Starts argv[0] (searched in PATH) with stdout and stderr captured in memory files, so a
  // chatty child never blocks on a full pipe. The child also dies with the thread that spawned
  // it (PR_SET_PDEATHSIG), so even a test process killed outright leaves no child behind.
  // stdin is the file at stdin_path, or /dev/null.
  static Result<Process> spawn(const std::vector<std::string>& argv,
                               const std::string& stdin_path = "");

  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();  // SIGKILL to the group, then reap

  pid_t pid() const { return pid_; }
  bool running();
  void signal(int sig) const;  // to the whole group

  // Waits for the exit; past the timeout the group is killed and timed_out is set.
  Output wait(std::chrono::milliseconds timeout);
  // Asks the process to finish (sig), waits up to grace, then kills it.
  Output stop(int sig = SIGTERM, std::chrono::milliseconds grace = 2s);

  // Output so far; wait_for() polls until needle shows up, the process exits or time runs out.
  std::string out() const;
  std::string err() const;
  bool wait_for(std::string_view needle, std::chrono::milliseconds timeout, bool in_stderr = true);

 private:
  Process() = default;
  void kill_and_reap();
  Output collect();
  void close_fds();

  pid_t pid_ = -1;
  int pidfd_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  std::optional<int> status_;  // wait status once reaped
};

// Runs argv to completion, at most timeout.
Output run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout = 10s,
           const std::string& stdin_path = "");

}  // namespace rl::testing
