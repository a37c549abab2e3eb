// SPDX-License-Identifier: GPL-2.0-only
// Bash completion written from rlctl's own CLI11 definition: every command, option and choice
// it offers is one rlctl parses, so the two cannot drift apart.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace rlctl {

std::string bash_completion(const CLI::App& app);

}  // namespace rlctl
