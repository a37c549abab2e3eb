// SPDX-License-Identifier: GPL-2.0-only
// rld's side of systemd's service protocol (Type=notify): READY once the program is attached
// with the policy applied, RELOADING/READY around every policy reload, STOPPING on the way
// out, and the watchdog ping from the event loop. Outside systemd (no NOTIFY_SOCKET) every
// call does nothing, so tests and foreground runs need no special case.
#pragma once

#include <string>

namespace rl::daemon::notify {

// Start-up is over: the program is attached and the first policy applied.
void ready(const std::string& status);

// The service manager sees a reload for as long as a Reloading lives. Before ready() (the
// start-up load) and outside systemd it does nothing.
class Reloading {
 public:
  Reloading();
  ~Reloading();
  Reloading(const Reloading&) = delete;
  Reloading& operator=(const Reloading&) = delete;

 private:
  bool sent_;
};

void stopping();

// STATUS= alone: what `systemctl status` shows, as it changes.
void status(const std::string& text);

// Start-up is waiting for something (an interface), at least once a second: STATUS= when it
// changes, the start timeout pushed on (EXTEND_TIMEOUT_USEC=, so rld's own bound decides), and
// the watchdog pinged.
void starting(const std::string& status);

// Called on every pass of the event loop; pings the watchdog (WatchdogSec=) at most once a
// second, so a stuck loop is what stops the pings.
void loop_tick();

}  // namespace rl::daemon::notify
