// SPDX-License-Identifier: GPL-2.0-only
// rlctl: the operator's command line for rld. Its commands are the table in commands/command.cc,
// one file each under commands/.
#include <CLI/CLI.hpp>
#include <iostream>

#include "common/cli_exit.h"
#include "rlctl/commands.h"
#include "rlctl/commands/command.h"

int main(int argc, char** argv) {
  CLI::App app{
      "rlctl: steer rld, the kernel-level (XDP) rate limiter.\n\n"
      "Examples:\n"
      "  rlctl status                      interfaces, policy generation, key table fill\n"
      "  rlctl policy validate web.yaml    check a policy without applying it (no rld needed)\n"
      "  rlctl policy diff web.yaml        what applying it would change\n"
      "  rlctl policy apply web.yaml       validate, install into the policy directory, apply\n"
      "  rlctl deny add 198.51.100.0/24 --ttl 10m\n"
      "                                    drop a network's packets for 10 minutes\n"
      "  rlctl top -n 20                   current offenders by dropped packets\n"
      "  rlctl top --by traffic            the keys sending the most, estimated from samples\n"
      "  rlctl key show 198.51.100.7       one source's tokens, block and drops in each rule\n"
      "  rlctl stats -o json               per-rule counters and rates, for scripts\n\n"
      "Global options (-o, --socket) go before or after the subcommand.",
      "rlctl"};
  app.require_subcommand(1);
  // Subcommands take the global options too: `rlctl stats -o json`.
  app.fallthrough();
  app.footer(
      "Exit status: 0 ok (policy validate: valid; status: rld is ready); 1 failure (rld "
      "refused the request, an invalid policy, no such rule or interface); 2 usage error "
      "(unknown command or option, bad value); 3 rld's control socket did not answer; 4 status: "
      "rld answered and is not ready (its NOT READY lines say why; the same with -o json).");
  rlctl::Globals g;
  rlctl::Context ctx{app, g, std::string("rlctl ") + RL_VERSION};
  app.set_version_flag("--version", ctx.version);
  app.add_option("-s,--socket", g.socket, "rld's control socket")->capture_default_str();
  app.add_option("-o,--output", g.output, "table or json")->check(CLI::IsMember({"table", "json"}));
  for (const auto& c : rlctl::command_table()) c.bind(*app.add_subcommand(c.name, c.help), ctx);

  // CLI11 would only say that a subcommand is required.
  if (auto unknown = rlctl::unknown_command(app, std::vector<std::string>(argv + 1, argv + argc))) {
    std::cerr << *unknown << "\n";
    return rl::kExitUsage;
  }
  if (auto rc = rl::parse_command_line(app, argc, argv)) return *rc;
  return rl::kExitOk;
}
