// The real rlctl binary on commands that need no rld: an unknown command is named with the
// closest known one and exits 2 (usage), `rlctl help` and `rlctl version` say what --help and
// --version say.
#include <gtest/gtest.h>

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
  for (std::vector<std::string> args : {std::vector<std::string>{"--", "frobnicate"},
                                        std::vector<std::string>{"stats", "frobnicate"}}) {
    auto extra = rlctl(args);
    EXPECT_EQ(extra.code, 2) << extra.describe();
    EXPECT_EQ(extra.err.find("unknown command"), std::string::npos) << extra.err;
  }
  // No command at all: usage error, as before.
  EXPECT_EQ(rlctl({}).code, 2);
}

TEST(RlctlCli, HelpShowsWhatHelpFlagsShow) {
  for (std::vector<std::string> path : {std::vector<std::string>{},
                                        std::vector<std::string>{"policy"},
                                        std::vector<std::string>{"policy", "validate"},
                                        std::vector<std::string>{"top"},
                                        std::vector<std::string>{"allow", "add"}}) {
    auto flag_args = path;
    flag_args.push_back("--help");
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

}  // namespace
}  // namespace rl::testing
