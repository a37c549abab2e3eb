// SPDX-License-Identifier: GPL-2.0-only
// rlctl cluster status.
#include <iostream>

#include "rlctl/commands/command.h"
#include "rlctl/commands/render.h"
#include "rlctl/table.h"

namespace rlctl {

void render_cluster_status(const proto::ClusterStatusResponse& d, std::ostream& out) {
  out << "node " << d.node << ", Redis " << (d.redis_up ? "up" : "DOWN") << ", last sync "
      << (d.last_sync_ms_ago ? num(d.last_sync_ms_ago) + " ms ago" : std::string("never")) << ", "
      << d.syncs << " syncs (" << d.early_syncs << " early), " << d.pending_keys
      << " keys pending, last pass " << d.last_pass_ms << " ms\n";
  if (!d.redis.empty())
    out << (d.topology.empty() ? "" : d.topology + ": ") << d.redis
        << (d.masters_changed
                ? (d.servers.empty() ? ", failovers followed: " : ", slot maps changed: ") +
                      num(d.masters_changed)
                : "")
        << "\n";
  if (!d.last_error.empty()) out << "last error: " << d.last_error << "\n";
  if (!d.servers.empty()) {
    Table servers({"MASTER", "SLOTS", "STATE", "CALLS", "ERRORS", "MOVED", "ASK", "LAST RTT (us)"});
    for (const auto& s : d.servers)
      // A master that holds none of this node's keys was never asked anything: idle, not down.
      servers.row({s.addr, num(s.slots),
                   s.up           ? "up"
                   : s.calls == 0 ? "idle"
                                  : "DOWN",
                   num(s.calls), num(s.errors), num(s.moved), num(s.ask), num(s.round_trip_us)});
    servers.print(out);
    out << "\n";
  }
  Table peers({"PEER", "LAST SEEN (server ms)"});
  for (const auto& p : d.peers) peers.row({p.node, num(p.last_seen_ms)});
  peers.print(out);
  out << "\n";
  Table blocked({"RULE", "KEY", "BLOCKED FOR (ms)"});
  for (const auto& b : d.blocked) blocked.row({b.rule, b.key, num(b.remaining_ms)});
  blocked.print(out);
}

void bind_cluster(CLI::App& cmd, Context& ctx) {
  cmd.require_subcommand(1);
  cmd.add_subcommand("status", "Redis, peers seen recently, last sync, blocked keys")
      ->callback([&g = ctx.globals] {
        call_and_render<proto::ClusterStatus>(g, {}, render_cluster_status);
      });
}

}  // namespace rlctl
