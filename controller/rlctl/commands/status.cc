// SPDX-License-Identifier: GPL-2.0-only
// rlctl status.
#include <iostream>

#include "rlctl/commands/command.h"
#include "rlctl/commands/render.h"

namespace rlctl {

void render_status(const proto::StatusResponse& d, std::ostream& out) {
  out << "rld " << d.version << ", up " << d.uptime_seconds << " s"
      << (d.adopted ? " (adopted a running data path)" : "") << "\n";
  for (const auto& i : d.interfaces) out << "interface " << i.name << ": " << i.mode << "\n";
  if (d.interfaces.empty()) out << "no interface attached\n";
  if (!d.pins_outlive_rld) out << "WARNING: " << d.pin_warning << "\n";
  for (const auto& why : d.not_ready) out << "NOT READY: " << why << "\n";
  const auto& lr = d.last_reload;
  out << "policy: generation " << d.generation << ", " << d.rules << " rules from " << d.policy_dir
      << "\n";
  out << "last reload: " << (lr.ok ? "ok" : "FAILED") << " (" << lr.trigger << ")\n";
  for (const auto& e : lr.errors) out << "  " << e << "\n";
  const auto& k = d.keys;
  double fill = k.capacity > 0 ? 100.0 * static_cast<double>(k.tracked) / k.capacity : 0;
  out << "keys: " << k.tracked << " tracked of " << k.capacity << " (" << num(fill) << "%), "
      << k.blocked << " blocked; table in use " << k.capacity_in_use << "\n";
}

void bind_status(CLI::App& cmd, Context& ctx) {
  cmd.callback([&g = ctx.globals] { call_and_render<proto::Status>(g, {}, render_status); });
}

}  // namespace rlctl
