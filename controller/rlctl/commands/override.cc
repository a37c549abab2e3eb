// SPDX-License-Identifier: GPL-2.0-only
// rlctl override add | del | list: another limit for the sources of a prefix within one rule.
#include <iostream>
#include <memory>

#include "rlctl/commands/command.h"
#include "rlctl/commands/render.h"
#include "rlctl/table.h"

namespace rlctl {

namespace {

std::string expires_text(const proto::OverrideView& v) {
  return v.expires_in_seconds ? num(*v.expires_in_seconds) : "never";
}

}  // namespace

void render_override(const char* verb, const proto::OverrideView& v, std::ostream& out) {
  out << verb << " override of rule " << v.rule << " limit " << v.limit << " for " << v.cidr << ": "
      << v.rate;
  if (v.burst) out << ", burst " << v.burst;
  if (v.expires_in_seconds) out << ", expires in " << *v.expires_in_seconds << " s";
  out << "\n";
}

void render_override_list(const proto::OverrideListResponse& d, std::ostream& out) {
  Table t({"RULE", "LIMIT", "CIDR", "RATE", "BURST", "EXPIRES IN (s)"});
  for (const auto& v : d.entries)
    t.row({v.rule, v.limit, v.cidr, v.rate, v.burst ? num(v.burst) : "-", expires_text(v)});
  t.print(out);
}

namespace {

struct OverrideOptions {
  proto::OverrideAddRequest add;
  std::string ttl;
  std::string rule;  // list: only this rule's
};

void do_add(const Globals& g, OverrideOptions& o) {
  o.add.ttl_seconds = parse_ttl_seconds(o.ttl);
  Json d = call_or_exit<proto::OverrideAdd>(g, o.add);
  if (!json_out(g, d)) render_override("added", d.get<proto::OverrideView>(), std::cout);
}

void do_list(const Globals& g, const OverrideOptions& o) {
  auto all = call_or_exit<proto::OverrideList>(g).get<proto::OverrideListResponse>();
  if (!o.rule.empty())
    std::erase_if(all.entries, [&](const proto::OverrideView& v) { return v.rule != o.rule; });
  if (!json_out(g, all)) render_override_list(all, std::cout);
}

}  // namespace

void bind_override(CLI::App& cmd, Context& ctx) {
  const Globals& g = ctx.globals;
  auto o = std::make_shared<OverrideOptions>();
  cmd.require_subcommand(1);
  auto* add = cmd.add_subcommand(
      "add",
      "give the sources of a prefix another rate within a rule's limit (replaces one "
      "for the same limit and prefix)");
  add->add_option("rule", o->add.rule, "the rule's name")->required();
  add->add_option("cidr", o->add.cidr, "address or CIDR of the sources")->required();
  add->add_option("--rate", o->add.rate, "the rate, as a policy writes it: 1000/s, 10MB/s")
      ->required();
  add->add_option("--burst", o->add.burst, "token buckets: units that may pass at once");
  add->add_option("--limit", o->add.limit,
                  "which of the rule's stacked limits, by name (default: its own)");
  add->add_option("--ttl", o->ttl, "lifetime, e.g. 10m, 2h (default: until removed)");
  add->callback([&g, o] { do_add(g, *o); });
  auto* del = cmd.add_subcommand("del", "remove an override");
  del->add_option("rule", o->add.rule, "the rule's name")->required();
  del->add_option("cidr", o->add.cidr, "address or CIDR, as added")->required();
  del->add_option("--limit", o->add.limit, "the stacked limit's name (default: the rule's own)");
  del->callback([&g, o] {
    call_and_render<proto::OverrideDel>(g, {o->add.rule, o->add.limit, o->add.cidr},
                                        [](const proto::OverrideView& v, std::ostream& out) {
                                          render_override("removed", v, out);
                                        });
  });
  auto* list = cmd.add_subcommand("list", "list the overrides in force");
  list->add_option("--rule", o->rule, "only this rule's");
  list->callback([&g, o] { do_list(g, *o); });
}

}  // namespace rlctl
