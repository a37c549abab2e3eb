// SPDX-License-Identifier: GPL-2.0-only
// A write to a peer that hung up raises SIGPIPE, whose default action kills the process. Code
// that writes through a library (OpenSSL, hiredis) cannot say MSG_NOSIGNAL: it blocks SIGPIPE
// around the calls instead, and consumes the one it caused, so the error comes back as EPIPE.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <ctime>

namespace rl {

class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlock() {
    if (!was_pending_) {
      timespec zero{};
      // Standard signals do not queue: at most one is pending.
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

}  // namespace rl
