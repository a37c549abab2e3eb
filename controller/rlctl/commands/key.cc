// SPDX-License-Identifier: GPL-2.0-only
// rlctl key show.
#include <ctime>
#include <iostream>
#include <memory>

#include "rlctl/commands/command.h"
#include "rlctl/commands/render.h"
#include "rlctl/table.h"

namespace rlctl {

namespace {

// What a tracked key holds: tokens of a bucket, a window's count, or its open connections.
std::string state_text(const proto::KeyState& s) {
  if (s.tokens) return num(s.tokens) + " of " + num(s.burst) + " " + s.unit + " left";
  if (s.count && s.algorithm == "connections")
    return num(s.count) + " of " + num(s.limit) + " connections open";
  // The sliding window's count weighs the window before in: an estimate over one period.
  if (s.count)
    return num(s.count) + " of " + num(s.limit) + " " + s.unit +
           (s.algorithm == "sliding_log"      ? " within the last period"
            : s.algorithm == "sliding_window" ? " over the last period (estimated)"
                                              : " in this window");
  return "not tracked (a fresh key)";
}

}  // namespace

void render_key_show(const proto::KeyShowResponse& d, std::ostream& out) {
  // One row per limit: a rule that stacks limits has a key in each (the source, its /24...).
  Table t({"RULE", "LIMIT", "KEY", "STATE", "BLOCKED", "DROPS", "LAST DROP"});
  for (const auto& r : d.rules) {
    for (const auto& l : r.limits) {
      std::string name = l.limit.value_or("-");
      if (l.note) {
        t.row({r.rule, name, "-", *l.note, "-", "-", "-"});
        continue;
      }
      std::string state = "not tracked (a fresh key)", blocked = "no";
      if (l.tracked && l.state) {
        state = state_text(*l.state);
        if (l.state->blocked) blocked = "yes, " + num(l.state->blocked_for_seconds) + " s";
      }
      std::string last = l.last_drop ? local_time(*l.last_drop) : "-";
      t.row({r.rule, name, l.key, state, blocked, num(l.drops), last});
    }
  }
  t.print(out);
  // The limits a runtime override judges the address by instead (rlctl override).
  for (const auto& r : d.rules)
    for (const auto& l : r.limits)
      if (l.override_by) {
        out << "override: rule " << r.rule << " limit " << l.limit.value_or("-") << ": "
            << l.override_by->rate << " for " << l.override_by->cidr;
        if (l.override_by->burst) out << ", burst " << l.override_by->burst;
        if (l.override_by->expires_in_seconds)
          out << ", expires in " << *l.override_by->expires_in_seconds << " s";
        out << "\n";
      }
}

void bind_key(CLI::App& cmd, Context& ctx) {
  cmd.require_subcommand(1);
  auto req = std::make_shared<proto::KeyShowRequest>();
  auto* show = cmd.add_subcommand(
      "show",
      "a source's keys in each rule, one per limit (the source, its prefix...): tokens or "
      "window count, block, drops");
  show->add_option("key", req->key, "ADDRESS, ADDRESS|PORT (per-port rules) or a CIDR")->required();
  show->add_option("--rule", req->rule, "only this rule");
  show->callback(
      [&g = ctx.globals, req] { call_and_render<proto::KeyShow>(g, *req, render_key_show); });
}

}  // namespace rlctl
