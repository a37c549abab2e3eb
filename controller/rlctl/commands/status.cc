// SPDX-License-Identifier: GPL-2.0-only
// rlctl status.
#include <iostream>

#include "common/cli_exit.h"
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
  out << "policy: generation " << d.generation << ", " << d.rules << " rules ";
  // Degraded: the policy did not load at start, and the rule set in force is the one adopted
  // from the pins.
  if (d.degraded)
    out << "adopted from the pins in " << d.pin_root << " (the policy in " << d.policy_dir
        << " did not load)\n";
  else
    out << "from " << d.policy_dir << "\n";
  out << "last reload: " << (lr.ok ? "ok" : "FAILED") << " (" << lr.trigger << ")\n";
  for (const auto& e : lr.errors) out << "  " << e << "\n";
  for (const auto& s : d.sets.value_or(std::vector<proto::SetState>{})) {
    out << "set " << s.name << ": " << s.prefixes << " prefixes";
    if (s.source != "inline")
      out << " from " << (s.directory ? "the " + std::to_string(s.files) + " files of " : "")
          << s.source;
    if (s.updated) out << ", updated " << local_time(*s.updated);
    out << "\n";
  }
  const auto& k = d.keys;
  double fill = k.capacity > 0 ? 100.0 * static_cast<double>(k.tracked) / k.capacity : 0;
  out << "keys: " << k.tracked << " tracked of " << k.capacity << " (" << num(fill) << "%), "
      << k.blocked << " blocked; table in use " << k.capacity_in_use << "\n";
}

// rld's readiness as rlctl status's exit status. An rld that is not ready always gives its
// reasons (not_ready); one older than the readiness fields gives none and counts as ready.
int status_exit_code(const proto::StatusResponse& d) {
  return d.not_ready.empty() ? rl::kExitOk : rl::kExitNotReady;
}

// Printed as any command's response; then exits kExitNotReady while rld is not ready, with -o
// json too, so that a script or a probe needs no parsing to tell.
void bind_status(CLI::App& cmd, Context& ctx) {
  cmd.callback([&g = ctx.globals] {
    Json data = call_or_exit<proto::Status>(g);
    auto d = data.get<proto::StatusResponse>();
    if (!json_out(g, data)) render_status(d, std::cout);
    if (int code = status_exit_code(d); code != rl::kExitOk) {
      std::cout.flush();
      std::exit(code);
    }
  });
}

}  // namespace rlctl
