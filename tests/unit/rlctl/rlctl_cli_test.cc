// SPDX-License-Identifier: GPL-2.0-only
// The real rlctl binary on commands that need no rld: an unknown command is named with the
// closest known one and exits 2 (usage), `rlctl help` and `rlctl version` say what --help and
// --version say, and `rlctl man-commands` (rlctl(8)'s COMMANDS section) lists every command
// and option that --help shows.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "process.h"

namespace rl::testing {
namespace {

const std::string kSocket = "/nonexistent/rld.sock";  // nothing here may reach an rld

Output rlctl(std::vector<std::string> args) {
  args.insert(args.begin(), RL_RLCTL_PATH);
  return run(args);
}

void expect_usage_error(const std::vector<std::string>& args, const std::string& message) {
  auto r = rlctl(args);
  EXPECT_EQ(r.code, 2) << r.describe();
  EXPECT_EQ(r.err, message + "\n");
  EXPECT_EQ(r.out, "");
}

TEST(RlctlCli, AnUnknownCommandIsNamedWithTheClosestKnownOne) {
  expect_usage_error({"stauts"}, "rlctl: unknown command 'stauts'; did you mean 'status'?");
  expect_usage_error({"pol"}, "rlctl: unknown command 'pol'; did you mean 'policy'?");
  expect_usage_error({"policy", "valdate", "web.yaml"},
                     "rlctl policy: unknown command 'valdate'; did you mean 'validate'?");
  expect_usage_error({"deny", "ad", "198.18.0.1"},
                     "rlctl deny: unknown command 'ad'; did you mean 'add'?");
  // Global options and their values are skipped, in every spelling, before and after a command.
  expect_usage_error({"-s", kSocket, "-o", "json", "stat"},
                     "rlctl: unknown command 'stat'; did you mean 'stats'?");
  expect_usage_error({"--socket=" + kSocket, "-ojson", "key", "-o", "json", "shwo"},
                     "rlctl key: unknown command 'shwo'; did you mean 'show'?");
}

TEST(RlctlCli, AnUnknownCommandWithNothingCloseListsTheCommands) {
  auto r = rlctl({"frobnicate"});
  EXPECT_EQ(r.code, 2) << r.describe();
  EXPECT_EQ(r.out, "");
  const std::string head = "rlctl: unknown command 'frobnicate'; the commands are status, attach, ";
  EXPECT_EQ(r.err.substr(0, head.size()), head) << r.err;
  EXPECT_NE(r.err.find(", help, version\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("man-commands"), std::string::npos) << "a hidden command is not offered";
  // A word that cannot be printed as it is comes out escaped, on one line.
  auto odd = rlctl({"st\x1b[2Jatus"});
  EXPECT_EQ(odd.code, 2) << odd.describe();
  EXPECT_NE(odd.err.find("'st\\x1b[2Jatus'"), std::string::npos) << odd.err;
}

TEST(RlctlCli, WordsThatAreArgumentsAreNotCommands) {
  // A file named like a command is still a file: policy validate reads it (and finds none).
  auto r = rlctl({"policy", "validate", "/nonexistent/frobnicate.yaml"});
  EXPECT_EQ(r.code, 1) << r.describe();
  EXPECT_EQ(r.err.find("unknown command"), std::string::npos) << r.err;
  // Past "--" nothing is a command; a command without subcommands leaves extra words to CLI11.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--", "frobnicate"},
                                               std::vector<std::string>{"stats", "frobnicate"}}) {
    auto extra = rlctl(args);
    EXPECT_EQ(extra.code, 2) << extra.describe();
    EXPECT_EQ(extra.err.find("unknown command"), std::string::npos) << extra.err;
  }
  // No command at all: usage error, as before.
  EXPECT_EQ(rlctl({}).code, 2);
}

TEST(RlctlCli, HelpShowsWhatHelpFlagsShow) {
  for (const std::vector<std::string>& path :
       {std::vector<std::string>{}, std::vector<std::string>{"policy"},
        std::vector<std::string>{"policy", "validate"}, std::vector<std::string>{"top"},
        std::vector<std::string>{"allow", "add"}}) {
    auto flag_args = path;
    flag_args.emplace_back("--help");
    auto flag = rlctl(flag_args);
    ASSERT_EQ(flag.code, 0) << flag.describe();
    auto help_args = path;
    help_args.insert(help_args.begin(), "help");
    auto help = rlctl(help_args);
    EXPECT_EQ(help.code, 0) << help.describe();
    EXPECT_EQ(help.out, flag.out) << "rlctl help " << ::testing::PrintToString(path);
    EXPECT_EQ(help.err, "");
  }
  expect_usage_error({"help", "polcy"}, "rlctl: unknown command 'polcy'; did you mean 'policy'?");
  expect_usage_error({"help", "policy", "lsit"},
                     "rlctl policy: unknown command 'lsit'; did you mean 'list'?");
}

TEST(RlctlCli, VersionSaysWhatTheFlagSays) {
  auto flag = rlctl({"--version"});
  auto cmd = rlctl({"version"});
  EXPECT_EQ(flag.code, 0) << flag.describe();
  EXPECT_EQ(cmd.code, 0) << cmd.describe();
  EXPECT_EQ(cmd.out, std::string("rlctl ") + RL_VERSION + "\n");
  EXPECT_EQ(cmd.out, flag.out);
}

// Subcommands and option names of `rlctl PATH --help`.
struct HelpSections {
  std::vector<std::string> subcommands;
  std::set<std::string> options;
};
HelpSections help_sections(const std::vector<std::string>& path) {
  auto args = path;
  args.emplace_back("--help");
  auto r = rlctl(args);
  HelpSections h;
  std::istringstream in(r.out);
  std::string section;
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_match(line, m, std::regex(R"((\S.*):)"))) {
      section = m[1];
      continue;
    }
    if (!std::regex_search(line, m, std::regex(R"(^  (\S+))"))) continue;
    if (section == "Subcommands") h.subcommands.push_back(m[1]);
    if (section == "Options") {
      std::string names = m[1];
      names = names.substr(0, names.find_first_of(" =:"));
      std::istringstream n(names);
      for (std::string name; std::getline(n, name, ',');)
        if (name.rfind('-', 0) == 0 && name != "-h" && name != "--help") h.options.insert(name);
    }
  }
  return h;
}

// man-commands' roff: each command's entry (".TP" then its synopsis in bold) and its options.
std::map<std::string, std::set<std::string>> man_entries(const std::string& roff) {
  std::map<std::string, std::set<std::string>> entries;
  std::istringstream in(roff);
  std::string current, prev;
  std::smatch m;
  const std::regex option_name(R"(\\fB((\\-)+[a-z-]+)\\fR)");
  for (std::string line; std::getline(in, line); prev = line) {
    if (prev == ".TP" && std::regex_search(line, m, std::regex(R"(^\\fB(rlctl[^\\]*)\\fR)"))) {
      current = m[1];
      entries[current];
      continue;
    }
    if (prev == ".TP" && !current.empty())
      for (std::sregex_iterator it(line.begin(), line.end(), option_name), end; it != end; ++it) {
        std::string name = (*it)[1];
        entries[current].insert(std::regex_replace(name, std::regex(R"(\\-)"), "-"));
      }
  }
  return entries;
}

TEST(RlctlCli, TheManPagesCommandsAreEveryCommandHelpShows) {
  auto r = rlctl({"man-commands"});
  ASSERT_EQ(r.code, 0) << r.describe();
  ASSERT_EQ(r.out.rfind("[COMMANDS]\n", 0), 0u) << r.out;
  auto entries = man_entries(r.out);

  std::set<std::string> leaves;
  std::vector<std::vector<std::string>> todo = {{}};
  while (!todo.empty()) {
    auto path = todo.back();
    todo.pop_back();
    auto h = help_sections(path);
    for (const auto& s : h.subcommands) {
      auto sub = path;
      sub.push_back(s);
      todo.push_back(sub);
    }
    if (path.empty() || !h.subcommands.empty()) continue;
    std::string name = "rlctl";
    for (const auto& w : path) name += " " + w;
    leaves.insert(name);
    ASSERT_TRUE(entries.count(name)) << name << " is not in rlctl(8)\n" << r.out;
    EXPECT_EQ(entries[name], h.options) << name;
  }
  std::set<std::string> listed;
  for (const auto& [name, opts] : entries) listed.insert(name);
  EXPECT_EQ(listed, leaves);
  EXPECT_GE(leaves.size(), 20u);
  EXPECT_EQ(help_sections({}).options.count("--version"), 1u);
  EXPECT_EQ(r.out.find("man-commands"), std::string::npos);
}

}  // namespace
}  // namespace rl::testing
