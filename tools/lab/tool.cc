// SPDX-License-Identifier: GPL-2.0-only
#include "tool.h"

#include <signal.h>

#include <cstdio>

namespace rl::lab {
namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

}  // namespace

int Tool::fail(int code, const Error& e) const {
  std::fprintf(stderr, "%s: %s\n", name_.c_str(), e.str().c_str());
  return code;
}

std::optional<Iface> Tool::lab_iface(const std::string& iface, int* exit_code) const {
  if (auto s = require_lab_namespace(name_); !s) {
    *exit_code = fail(kExitUsage, s.error());
    return std::nullopt;
  }
  auto found = lookup_iface(iface);
  if (!found) {
    *exit_code = fail(kExitRuntime, found.error());
    return std::nullopt;
  }
  return *found;
}

const std::atomic<bool>& Tool::stop_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return g_stop;
}

}  // namespace rl::lab
