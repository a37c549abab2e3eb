// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/service/loop_priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

namespace rl::daemon {

Result<std::string> raise_loop_priority(const LoopPriority& p) {
  if (p.realtime > 0) {
    sched_param sp{};
    sp.sched_priority = p.realtime;
    // sched_setscheduler with pid 0 is the calling thread, not the process.
    if (::sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) != 0)
      return errno_error("SCHED_FIFO priority " + std::to_string(p.realtime) +
                         " for the event loop (needs CAP_SYS_NICE)");
    return loop_priority_text();
  }
  // A thread's nice value is per thread on Linux (setpriority with the thread's id).
  if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), p.nice) != 0)
    return errno_error("nice " + std::to_string(p.nice) +
                       " for the event loop (a negative value needs CAP_SYS_NICE)");
  if (p.nice < 0) {
    // Keeps the raised nice value to this thread: new threads start at nice 0.
    sched_param sp{};
    if (::sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp) != 0)
      return errno_error("SCHED_RESET_ON_FORK for the event loop");
  }
  return loop_priority_text();
}

std::string loop_priority_text() {
  int policy = ::sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
  if (policy == SCHED_FIFO || policy == SCHED_RR) {
    sched_param sp{};
    ::sched_getparam(0, &sp);
    return std::string(policy == SCHED_FIFO ? "fifo " : "rr ") + std::to_string(sp.sched_priority);
  }
  errno = 0;
  int nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
  return "nice " + std::to_string(errno ? 0 : nice);
}

}  // namespace rl::daemon
