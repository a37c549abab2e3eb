// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/service/notify.h"

#include <systemd/sd-daemon.h>
#include <time.h>

#include <atomic>
#include <cstdint>

#include "common/log.h"

namespace rl::daemon::notify {
namespace {

std::atomic<bool> g_ready{false};

uint64_t monotonic_usec() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000 + static_cast<uint64_t>(ts.tv_nsec) / 1000;
}

void send(const std::string& state) {
  // < 0: the socket is there and the message did not get through; 0: not under systemd.
  if (int rc = sd_notify(0, state.c_str()); rc < 0)
    log::warn("systemd notification failed", {{"state", state}, {"errno", std::to_string(-rc)}});
}

}  // namespace

void ready(const std::string& status) {
  send("READY=1\nSTATUS=" + status);
  g_ready = true;
}

Reloading::Reloading() : sent_(g_ready.load()) {
  // MONOTONIC_USEC lets systemd 253+ tell this reload from an earlier one; 252 ignores it.
  if (sent_) send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(monotonic_usec()));
}

Reloading::~Reloading() {
  if (sent_) send("READY=1");
}

void stopping() { send("STOPPING=1"); }

void status(const std::string& text) { send("STATUS=" + text); }

void starting(const std::string& status) {
  static std::string last;
  // Ahead of the next call by well over its one second: systemd 236+ honours it, older ones
  // ignore the field.
  std::string msg = "EXTEND_TIMEOUT_USEC=10000000";
  if (status != last) msg += "\nSTATUS=" + status;
  last = status;
  send(msg);
  loop_tick();
}

void loop_tick() {
  static uint64_t interval = [] {
    uint64_t usec = 0;
    return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
  }();
  static uint64_t last = 0;
  if (!interval) return;
  uint64_t now = monotonic_usec();
  // The event loop wakes at least once a second; systemd wants a ping within `interval`.
  if (now - last < 1'000'000 && now - last < interval / 2) return;
  last = now;
  send("WATCHDOG=1");
}

}  // namespace rl::daemon::notify
