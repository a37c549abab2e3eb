// SPDX-License-Identifier: GPL-2.0-only
// rlctl attach, rlctl detach.
#include <iostream>
#include <memory>

#include "rlctl/commands/command.h"
#include "rlctl/commands/render.h"

namespace rlctl {

void render_attach(const std::string& interface, const proto::AttachResponse& d,
                   std::ostream& out) {
  out << "attached to " << interface << " (" << d.mode << ")\n";
  if (!d.warning.empty()) out << "warning: " << d.warning << "\n";
}

void render_detach(const std::string& interface, std::ostream& out) {
  out << "detached from " << interface << "\n";
}

namespace {

void do_attach(const Globals& g, const proto::AttachRequest& req) {
  call_and_render<proto::Attach>(g, req, [&](const proto::AttachResponse& d, std::ostream& out) {
    render_attach(req.interface, d, out);
  });
}

void do_detach(const Globals& g, const proto::InterfaceRequest& req) {
  call_and_render<proto::Detach>(g, req, [&](const proto::DetachResponse&, std::ostream& out) {
    render_detach(req.interface, out);
  });
}

}  // namespace

void bind_attach(CLI::App& cmd, Context& ctx) {
  auto req = std::make_shared<proto::AttachRequest>();
  req->mode = "auto";
  cmd.add_option("interface", req->interface, "interface name")->required();
  cmd.add_option("--mode", *req->mode, "auto, native or generic")->capture_default_str();
  cmd.callback([&g = ctx.globals, req] { do_attach(g, *req); });
}

void bind_detach(CLI::App& cmd, Context& ctx) {
  auto req = std::make_shared<proto::InterfaceRequest>();
  cmd.add_option("interface", req->interface, "interface name")->required();
  cmd.callback([&g = ctx.globals, req] { do_detach(g, *req); });
}

}  // namespace rlctl
