// SPDX-License-Identifier: GPL-2.0-only
// The control protocol's commands and who answers each: rld registers one handler per command
// (daemon.cc), and dispatch() checks the protocol version, finds the handler and turns bad
// arguments into an error reply, so no handler repeats that and no exception leaves it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "control/protocol.h"

namespace rl::control {

class HandlerTable {
 public:
  using Handler = std::function<Json(const Json& args)>;

  // A command answered by `handler`; registering a name twice is a programming error (aborts).
  void add(const std::string& cmd, Handler handler);
  // The same for a command of protocol.h: handlers.add<control::Status>(...).
  template <class Command>
  void add(Handler handler) {
    add(Command::kName, std::move(handler));
  }
  bool has(const std::string& cmd) const { return handlers_.count(cmd) != 0; }
  std::vector<std::string> commands() const;

  // One request {"v": version, "cmd": name, "args": {...}}: the handler's reply, or an error
  // reply for another protocol version, an unknown command or arguments of the wrong type.
  Json dispatch(const Json& request) const;

 private:
  std::map<std::string, Handler> handlers_;
};

}  // namespace rl::control
