// SPDX-License-Identifier: GPL-2.0-only
// rlctl unblock.
#include <iostream>
#include <memory>

#include "rlctl/commands/command.h"
#include "rlctl/commands/render.h"

namespace rlctl {

void render_unblock(const proto::UnblockResponse& d, std::ostream& out) {
  out << "reset " << d.keys_reset << " keys of " << d.address << "\n";
}

void bind_unblock(CLI::App& cmd, Context& ctx) {
  auto req = std::make_shared<proto::UnblockRequest>();
  cmd.add_option("address", req->address, "IPv4 or IPv6 address")->required();
  cmd.callback(
      [&g = ctx.globals, req] { call_and_render<proto::Unblock>(g, *req, render_unblock); });
}

}  // namespace rlctl
