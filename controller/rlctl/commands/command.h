// SPDX-License-Identifier: GPL-2.0-only
// rlctl's commands as a table: each top-level command is a name, its help and a bind function
// (commands/<command>.cc) that adds its options and subcommands to CLI11 and runs its do_X.
// main() makes the App, adds the global options and binds the table; completion and the man
// page are written from the App so bound.
#pragma once

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "control/protocol.h"

namespace rlctl {

using rl::control::Json;

// The options every command takes, before or after it.
struct Globals {
  std::string socket = rl::control::kDefaultSocketPath;
  std::string output = "table";  // or "json"
};

// What a command's binding gets besides its own App.
struct Context {
  CLI::App& root;
  Globals& globals;
  std::string version;  // "rlctl 1.2.3"
};

struct Command {
  const char* name;
  const char* help;
  void (*bind)(CLI::App& cmd, Context& ctx);
};

// Every top-level command, in the order --help lists them.
const std::vector<Command>& command_table();

// Calls rld and returns the response's data; prints rld's error (or the whole response with -o
// json) and exits 1 when it refused, or says why and exits 3 when it did not answer.
Json call_or_exit(const Globals& g, const std::string& cmd, const Json& args);
template <class Command>
Json call_or_exit(const Globals& g, const typename Command::Request& args = {}) {
  return call_or_exit(g, Command::kName, Json(args));
}

// --ttl as whole seconds (0 when not given); exits with a usage error for a bad one or one under
// a second, which would read as "never expires".
uint64_t parse_ttl_seconds(const std::string& ttl);

// With -o json: prints `data` and returns true.
bool json_out(const Globals& g, const Json& data);

// Calls rld and prints its data: as JSON with -o json, else as `render` renders the response.
template <class Command, class Render>
void call_and_render(const Globals& g, const typename Command::Request& args, Render render) {
  Json d = call_or_exit<Command>(g, args);
  if (!json_out(g, d)) render(d.get<typename Command::Response>(), std::cout);
}

// The binders, one per command file.
void bind_status(CLI::App& cmd, Context& ctx);
void bind_attach(CLI::App& cmd, Context& ctx);
void bind_detach(CLI::App& cmd, Context& ctx);
void bind_policy(CLI::App& cmd, Context& ctx);
void bind_allow(CLI::App& cmd, Context& ctx);
void bind_deny(CLI::App& cmd, Context& ctx);
void bind_override(CLI::App& cmd, Context& ctx);
void bind_unblock(CLI::App& cmd, Context& ctx);
void bind_top(CLI::App& cmd, Context& ctx);
void bind_key(CLI::App& cmd, Context& ctx);
void bind_stats(CLI::App& cmd, Context& ctx);
void bind_cluster(CLI::App& cmd, Context& ctx);
void bind_completion(CLI::App& cmd, Context& ctx);
void bind_help(CLI::App& cmd, Context& ctx);
void bind_version(CLI::App& cmd, Context& ctx);
void bind_man_commands(CLI::App& cmd, Context& ctx);

}  // namespace rlctl
