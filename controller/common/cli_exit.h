// SPDX-License-Identifier: GPL-2.0-only
// Exit codes rld and rlctl share, and command-line parsing that keeps to them: CLI11 returns
// its own codes (105 and up) for usage errors, where scripts expect 2.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

namespace rl {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnreachable = 3;  // rlctl: rld's control socket did not answer
// rlctl status: rld answered and is not ready (the reasons /readyz gives with its 503).
inline constexpr int kExitNotReady = 4;
// rld: the configuration file or the policy is what failed the start (LSB's "program is not
// configured"). The unit does not restart on it: a retry would read the same files.
inline constexpr int kExitNotConfigured = 6;

// Parses the command line (running subcommand callbacks). nullopt: go on. Otherwise the
// process's exit code: 0 after --help or --version, kExitUsage after printing a usage error.
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  return std::nullopt;
}

}  // namespace rl
