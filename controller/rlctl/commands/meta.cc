// SPDX-License-Identifier: GPL-2.0-only
// rlctl completion | help | version | man-commands: rlctl about itself.
#include <iostream>
#include <memory>

#include "common/cli_exit.h"
#include "rlctl/commands.h"
#include "rlctl/commands/command.h"
#include "rlctl/completion.h"
#include "rlctl/man_page.h"

namespace rlctl {

void bind_completion(CLI::App& cmd, Context& ctx) {
  auto shell = std::make_shared<std::string>("bash");
  cmd.add_option("shell", *shell, "bash")->check(CLI::IsMember({"bash"}));
  cmd.callback([&root = ctx.root, shell] { std::cout << bash_completion(root); });
}

void bind_help(CLI::App& cmd, Context& ctx) {
  auto words = std::make_shared<std::vector<std::string>>();
  cmd.add_option("command", *words, "a command, e.g. policy validate");
  cmd.callback([&root = ctx.root, words] {
    auto found = find_command(root, *words);
    if (found.command == nullptr) {
      std::cerr << found.error << "\n";
      std::exit(rl::kExitUsage);
    }
    // The formatter, as App::help() would show the help of the command parsed (this one).
    std::cout << found.command->get_formatter()->make_help(
        found.command, command_path(*found.command), CLI::AppFormatMode::Normal);
  });
}

void bind_version(CLI::App& cmd, Context& ctx) {
  cmd.callback([version = ctx.version] { std::cout << version << "\n"; });
}

void bind_man_commands(CLI::App& cmd, Context& ctx) {
  cmd.group("");  // an empty group hides it from --help and completion
  cmd.callback([&root = ctx.root] { std::cout << man_commands(root); });
}

}  // namespace rlctl
