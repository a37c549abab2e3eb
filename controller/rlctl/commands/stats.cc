// SPDX-License-Identifier: GPL-2.0-only
// rlctl stats.
#include <iostream>

#include "rlctl/commands/command.h"
#include "rlctl/commands/render.h"
#include "rlctl/table.h"

namespace rlctl {

void render_stats(const proto::StatsResponse& d, std::ostream& out) {
  Table t(
      {"RULE", "ACTION", "MATCHED", "PASSED", "DROPPED", "MONITORED", "MATCHED/s", "DROPPED/s"});
  for (const auto& r : d.rules) {
    const auto& c = r.counters;
    std::optional<double> matched_pps, dropped_pps;
    if (r.rates) {
      matched_pps = r.rates->matched_pps;
      dropped_pps = r.rates->dropped_pps;
    }
    t.row({r.name, r.action, num(c.matched_packets), num(c.passed_packets), num(c.dropped_packets),
           num(c.monitored_packets), num(matched_pps), num(dropped_pps)});
  }
  t.print(out);
  // Rules with stacked limits: which limit refused what.
  Table lt({"RULE", "LIMIT", "REFUSED", "REFUSED BYTES"});
  bool stacked = false;
  for (const auto& r : d.rules)
    for (const auto& l : r.limits.value_or(std::vector<proto::LimitRefused>{})) {
      lt.row({r.name, l.name, num(l.refused_packets), num(l.refused_bytes)});
      stacked = true;
    }
  if (stacked) {
    out << "\n";
    lt.print(out);
  }
  out << "\n";
  Table gt({"COUNTER", "PACKETS", "BYTES"});
  for (const auto& [name, v] : d.global) gt.row({name, num(v.packets), num(v.bytes)});
  gt.print(out);
}

void bind_stats(CLI::App& cmd, Context& ctx) {
  cmd.callback([&g = ctx.globals] { call_and_render<proto::Stats>(g, {}, render_stats); });
}

}  // namespace rlctl
