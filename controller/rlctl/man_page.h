// SPDX-License-Identifier: GPL-2.0-only
// The COMMANDS section of rlctl(8), written from rlctl's own CLI11 definition as help2man
// include text, so the page lists every command and option rlctl parses and no other.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace rlctl {

// "[COMMANDS]" and, for every command that runs (hidden ones left out), its synopsis,
// description and options, in roff.
std::string man_commands(const CLI::App& root);

// `text` as roff text: backslashes escaped, a leading '.' or '\'' (a request) and a leading '['
// (a section header in a help2man include file) made literal, and the '-' that starts an
// option name (--ttl) a minus sign, as man pages write options.
std::string roff_escape(const std::string& text);

}  // namespace rlctl
