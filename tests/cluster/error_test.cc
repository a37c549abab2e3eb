// SPDX-License-Identifier: GPL-2.0-only
// An error reply's kind, from its code: what the store and its callers decide on.
#include "cluster/error.h"

#include <gtest/gtest.h>

namespace rl::cluster {
namespace {

TEST(ErrorKindTest, ReplyCodes) {
  EXPECT_EQ(reply_error_kind("NOSCRIPT No matching script. Please use EVAL."),
            ErrorKind::kNoScript);
  EXPECT_EQ(reply_error_kind("NOAUTH Authentication required."), ErrorKind::kAuth);
  EXPECT_EQ(reply_error_kind("WRONGPASS invalid username-password pair"), ErrorKind::kAuth);
  EXPECT_EQ(reply_error_kind("OOM command not allowed when used memory > 'maxmemory'."),
            ErrorKind::kServer);
  EXPECT_EQ(reply_error_kind("ERR Error running script NOSCRIPT"), ErrorKind::kServer)
      << "the code is the first word only";
  EXPECT_EQ(reply_error_kind("NOSCRIPT"), ErrorKind::kNoScript);
  EXPECT_EQ(reply_error_kind("NOPERM User rld has no permissions to run the 'zadd' command"),
            ErrorKind::kPermission);
  // Redis 7.0's words for a command the ACL refuses inside a script.
  EXPECT_EQ(reply_error_kind("ERR The user executing the script can't run this command or "
                             "subcommand script: 863fe0d8, on @user_script:9."),
            ErrorKind::kPermission);
  EXPECT_EQ(reply_error_kind("READONLY You can't write against a read only replica."),
            ErrorKind::kReadOnly)
      << "a master demoted by a failover";
  EXPECT_EQ(reply_error_kind(""), ErrorKind::kServer);
}

TEST(ErrorKindTest, ScriptRefusalSaysWhereInTheScript) {
  auto where = script_refusal(
      "ERR The user executing the script can't run this command or subcommand script: "
      "863fe0d8ab, on @user_script:9.");
  ASSERT_TRUE(where);
  EXPECT_EQ(where->sha1, "863fe0d8ab");
  EXPECT_EQ(where->line, 9u);
  auto nowhere = script_refusal("ERR The user executing the script can't run this command");
  ASSERT_TRUE(nowhere) << "still a refusal, without its place";
  EXPECT_EQ(nowhere->sha1, "");
  EXPECT_EQ(nowhere->line, 0u);
  EXPECT_FALSE(script_refusal("NOPERM User rld has no permissions to run the 'zadd' command"));
  EXPECT_FALSE(script_refusal("ERR Error running script"));
}

TEST(ErrorKindTest, WrapKeepsTheKind) {
  StoreError e{ErrorKind::kTimeout, ETIMEDOUT, "read"};
  StoreError w = e.wrap("sync");
  EXPECT_EQ(w.kind, ErrorKind::kTimeout);
  EXPECT_EQ(w.err, ETIMEDOUT);
  EXPECT_EQ(w.message, "sync: read");
  EXPECT_STREQ(to_string(w.kind), "timeout");
}

}  // namespace
}  // namespace rl::cluster
