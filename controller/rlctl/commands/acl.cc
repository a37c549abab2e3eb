// SPDX-License-Identifier: GPL-2.0-only
// rlctl allow | deny add | del | list: the runtime lists.
#include <iostream>
#include <memory>

#include "rlctl/commands/command.h"
#include "rlctl/commands/render.h"
#include "rlctl/table.h"

namespace rlctl {

void render_acl_add(const std::string& list, const proto::AclAddResponse& d, std::ostream& out) {
  out << list << " " << d.cidr << "\n";
}

void render_acl_del(const proto::AclDelResponse& d, std::ostream& out) {
  out << "removed " << d.cidr << "\n";
}

void render_acl_list(const proto::AclListResponse& d, std::ostream& out) {
  Table t({"CIDR", "EXPIRES IN (s)"});
  for (const auto& e : d.entries) t.row({e.cidr, num(e.expires_in_seconds)});
  t.print(out);
}

namespace {

struct AclOptions {
  std::string list;  // allow or deny
  std::string cidr, ttl;
};

void do_add(const Globals& g, const AclOptions& o) {
  Json d = call_or_exit<proto::AclAdd>(g, {o.list, o.cidr, parse_ttl_seconds(o.ttl)});
  if (!json_out(g, d)) render_acl_add(o.list, d.get<proto::AclAddResponse>(), std::cout);
}

// rld lists both lists' entries: the one asked for only.
void do_list(const Globals& g, const AclOptions& o) {
  auto all = call_or_exit<proto::AclList>(g).get<proto::AclListResponse>();
  proto::AclListResponse mine;
  for (const auto& e : all.entries)
    if (e.list == o.list) mine.entries.push_back(e);
  if (!json_out(g, mine)) render_acl_list(mine, std::cout);
}

void bind_list(CLI::App& cmd, Context& ctx, const char* list) {
  const Globals& g = ctx.globals;
  auto o = std::make_shared<AclOptions>();
  o->list = list;
  cmd.require_subcommand(1);
  auto* add = cmd.add_subcommand("add", std::string("add a CIDR to the runtime ") + list + " list");
  add->add_option("cidr", o->cidr, "address or CIDR")->required();
  add->add_option("--ttl", o->ttl, "lifetime, e.g. 10m, 2h (default: until removed)");
  add->callback([&g, o] { do_add(g, *o); });
  auto* del =
      cmd.add_subcommand("del", std::string("remove a CIDR from the runtime ") + list + " list");
  del->add_option("cidr", o->cidr, "address or CIDR")->required();
  del->callback([&g, o] { call_and_render<proto::AclDel>(g, {o->list, o->cidr}, render_acl_del); });
  cmd.add_subcommand("list", "list the runtime entries")->callback([&g, o] { do_list(g, *o); });
}

}  // namespace

void bind_allow(CLI::App& cmd, Context& ctx) { bind_list(cmd, ctx, proto::kAllowList); }

void bind_deny(CLI::App& cmd, Context& ctx) { bind_list(cmd, ctx, proto::kDenyList); }

}  // namespace rlctl
