// SPDX-License-Identifier: GPL-2.0-only
// What every lab sender's main() does around its send loop: exit codes, error lines, a stop flag
// raised by SIGINT/SIGTERM, and the checks that it runs in a lab namespace on an interface that
// exists.
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "common/result.h"
#include "iface.h"

namespace rl::lab {

// 0 all sent; 1 runtime error; 2 invalid or refused arguments; 3 stopped by the time bound or a
// signal before the count.
constexpr int kExitOk = 0, kExitRuntime = 1, kExitUsage = 2, kExitIncomplete = 3;

class Tool {
 public:
  explicit Tool(std::string name) : name_(std::move(name)) {}

  // Prints "name: error" and returns code, for `return tool.fail(...)`.
  int fail(int code, const Error& e) const;

  // Refuses to run outside a lab namespace (kExitUsage) or without the interface (kExitRuntime).
  // Either way the error is printed and *exit_code set.
  std::optional<Iface> lab_iface(const std::string& iface, int* exit_code) const;

  // Raised by SIGINT and SIGTERM. No SA_RESTART: a blocking send returns early, and the summary
  // of what went out still prints.
  static const std::atomic<bool>& stop_on_signals();

 private:
  std::string name_;
};

}  // namespace rl::lab
