// SPDX-License-Identifier: GPL-2.0-only
// rlctl's command tree as the user meets it: finding a command by its words (`rlctl help policy
// validate`), and naming an unknown command with the closest known one before CLI11, which
// would only say that a subcommand is required.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rlctl {

// The subcommands a user may type at `app`, hidden ones (an empty group) included.
std::vector<const CLI::App*> subcommands(const CLI::App& app);

// "rlctl policy validate" for the App of `policy validate`.
std::string command_path(const CLI::App& app);

// The command that `words` name under `root`, or the message for the first word that names
// none ("rlctl policy: unknown command 'valdate'; did you mean 'validate'?").
struct Lookup {
  const CLI::App* command = nullptr;
  std::string error;
};
Lookup find_command(const CLI::App& root, const std::vector<std::string>& words);

// Walks the command line as CLI11 will (options and their values skipped, including the global
// options a subcommand falls through to) and returns the unknown-command message for the first
// word that stands where a subcommand is expected and names none; nullopt if there is none.
std::optional<std::string> unknown_command(const CLI::App& root,
                                           const std::vector<std::string>& args);

}  // namespace rlctl
