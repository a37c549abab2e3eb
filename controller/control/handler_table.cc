// SPDX-License-Identifier: GPL-2.0-only
#include "control/handler_table.h"

#include <cstdlib>

namespace rl::control {

void HandlerTable::add(const std::string& cmd, Handler handler) {
  if (!handlers_.emplace(cmd, std::move(handler)).second) std::abort();
}

std::vector<std::string> HandlerTable::commands() const {
  std::vector<std::string> out;
  out.reserve(handlers_.size());
  for (const auto& [name, h] : handlers_) out.push_back(name);
  return out;
}

Json HandlerTable::dispatch(const Json& request) const {
  if (version_of(request) != kProtocolVersion)
    return fail("rlctl speaks control protocol version " + std::to_string(version_of(request)) +
                ", rld speaks " + std::to_string(kProtocolVersion));
  std::string cmd = command_of(request);
  auto it = handlers_.find(cmd);
  if (it == handlers_.end()) return fail("unknown command '" + cmd + "'");
  try {
    return it->second(args_of(request));
  } catch (const Json::exception& e) {
    return fail(std::string("bad arguments: ") + e.what());
  }
}

}  // namespace rl::control
