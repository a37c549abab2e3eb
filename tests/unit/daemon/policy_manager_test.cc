// SPDX-License-Identifier: GPL-2.0-only
// rld's policy logic without a kernel: the in-memory data path records what would be applied.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "daemon/policy/policy_manager.h"
#include "fake_datapath.h"
#include "scratch_dir.h"

namespace rl::daemon {
namespace {

namespace fs = std::filesystem;

using testing::FakeDatapath;

class PolicyDir : public testing::ScratchDirTest {
 protected:
  PolicyDir() : ScratchDirTest("rl-pm-") {}
};

TEST_F(PolicyDir, ReloadAppliesAndKeepsIdentities) {
  write("a.yaml", "rules:\n  - name: r1\n    limit: {rate: 10/s}\n");
  FakeDatapath dp;
  PolicyManager pm(dp, dir_, {}, {});
  auto r = pm.reload("test");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.rules, 1u);
  ASSERT_EQ(dp.applied.size(), 1u);
  uint32_t id = dp.applied[0].rules[0].id;

  write("b.yaml", "rules:\n  - name: r2\n    match: {port: 53}\n    limit: {rate: 5/s}\n");
  ASSERT_TRUE(pm.reload("test").ok);
  ASSERT_EQ(dp.applied.size(), 2u);
  EXPECT_EQ(dp.applied[1].ids.by_name.at("r1").id, id) << "unchanged rule keeps its identity";
  EXPECT_EQ(pm.rules().size(), 2u);
  EXPECT_EQ(pm.rule_count(), 2u);
  EXPECT_EQ(pm.reloads_ok(), 2u);
}

// A set read from a file: a reload that is not forced (inotify) applies when the file changed,
// and skips when nothing did; the set's time of update moves only when its prefixes do.
TEST_F(PolicyDir, ASetFileChangeReloadsAndOnlyAChangeMovesItsUpdateTime) {
  fs::create_directories(dir_ / "feeds");
  write("feeds/block.txt", "198.18.0.0/24\n198.18.1.0/24\n");
  write("a.yaml",
        "sets:\n  block: {file: feeds/block.txt}\nrules:\n  - name: r1\n"
        "    match: {sources: [block]}\n    limit: {rate: 10/s}\n");
  FakeDatapath dp;
  PolicyManager pm(dp, dir_, {}, {});
  ASSERT_TRUE(pm.reload("test").ok);
  ASSERT_EQ(pm.sets().size(), 1u);
  EXPECT_EQ(pm.sets()[0].prefixes, 2u);
  EXPECT_EQ(pm.sets()[0].source, (dir_ / "feeds/block.txt").string());
  const auto first = pm.sets()[0].updated;

  ASSERT_TRUE(pm.reload("inotify", false).ok);
  EXPECT_EQ(dp.applied.size(), 1u) << "nothing changed: nothing applied";

  write("feeds/.block.part", "198.18.0.0/24\n198.18.1.0/24\n198.18.2.0/24\n");
  fs::rename(dir_ / "feeds/.block.part", dir_ / "feeds/block.txt");
  ASSERT_TRUE(pm.reload("inotify", false).ok);
  ASSERT_EQ(dp.applied.size(), 2u) << "the file changed: applied";
  EXPECT_EQ(pm.sets()[0].prefixes, 3u);
  EXPECT_GE(pm.sets()[0].updated, first);
  EXPECT_EQ(dp.applied[1].sources.size(), 2u + 3u) << "both /0 entries and the three prefixes";
  const auto second = pm.sets()[0].updated;

  write("b.yaml", "rules:\n  - name: r2\n    limit: {rate: 5/s}\n");
  ASSERT_TRUE(pm.reload("inotify", false).ok);
  ASSERT_EQ(dp.applied.size(), 3u);
  EXPECT_EQ(pm.sets()[0].updated, second) << "the set did not change";

  write("feeds/block.txt", "198.18.0.0/24\nnot-a-prefix\n");
  auto r = pm.reload("inotify", false);
  ASSERT_FALSE(r.ok);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], (dir_ / "feeds/block.txt").string() +
                             ":2:1: error: invalid IPv4 address 'not-a-prefix'");
  EXPECT_EQ(pm.sets()[0].prefixes, 3u) << "the set in force stays";
}

TEST_F(PolicyDir, BrokenPolicyChangesNothing) {
  write("a.yaml", "rules:\n  - name: r1\n    limit: {rate: 10/s}\n");
  FakeDatapath dp;
  PolicyManager pm(dp, dir_, {}, {});
  ASSERT_TRUE(pm.reload("test").ok);
  write("b.yaml", "rules:\n  - name: r2\n    limit: {rate: 5/s, burts: 2}\n");
  auto r = pm.reload("test");
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("b.yaml:3:"), std::string::npos) << r.errors[0];
  EXPECT_NE(r.errors[0].find("did you mean 'burst'"), std::string::npos);
  EXPECT_EQ(dp.applied.size(), 1u) << "nothing reached the data path";
  EXPECT_EQ(pm.rules().size(), 1u) << "the policy in force stays";
  EXPECT_EQ(pm.reloads_failed(), 1u);
  EXPECT_FALSE(pm.last().ok);
}

TEST_F(PolicyDir, DataPathFailureKeepsThePolicyInForce) {
  write("a.yaml", "rules:\n  - name: r1\n    limit: {rate: 10/s}\n");
  FakeDatapath dp;
  PolicyManager pm(dp, dir_, {}, {});
  ASSERT_TRUE(pm.reload("test").ok);
  write("a.yaml", "rules:\n  - name: r1\n    limit: {rate: 20/s}\n");
  dp.fail_next = true;
  EXPECT_FALSE(pm.reload("test").ok);
  EXPECT_EQ(pm.policy().rules[0].limit.rate.amount, 10u);
  ASSERT_TRUE(pm.reload("test").ok);
  EXPECT_EQ(pm.policy().rules[0].limit.rate.amount, 20u);
}

// A directory without policy files: refused by default (the policy in force stays); applied as
// an empty rule set where rld's start asks for it (nothing is in force then).
TEST_F(PolicyDir, AnEmptyDirectoryAppliesOnlyWhereAsked) {
  FakeDatapath dp;
  PolicyManager pm(dp, dir_, {}, {});
  auto refused = pm.reload("test");
  EXPECT_FALSE(refused.ok);
  EXPECT_TRUE(refused.no_files);
  EXPECT_TRUE(pm.last().no_files);
  EXPECT_TRUE(dp.applied.empty());

  pm.set_empty_directory_applies(true);
  auto empty = pm.reload("startup");
  EXPECT_TRUE(empty.ok);
  EXPECT_TRUE(empty.no_files);
  EXPECT_TRUE(pm.last().no_files);
  EXPECT_EQ(empty.rules, 0u);
  ASSERT_EQ(dp.applied.size(), 1u);
  EXPECT_TRUE(dp.applied[0].rules.empty());

  pm.set_empty_directory_applies(false);
  write("a.yaml", "rules:\n  - name: r1\n    limit: {rate: 10/s}\n");
  ASSERT_TRUE(pm.reload("test").ok);
  EXPECT_FALSE(pm.last().no_files);
  fs::remove(dir_ / "a.yaml");
  EXPECT_FALSE(pm.reload("test").ok) << "removing every file does not empty the rule set";
  EXPECT_EQ(pm.rule_count(), 1u);
}

TEST(PolicyDiff, NamesWhatChanges) {
  auto a = policy::load_string(
      "sets: {lab: [198.18.0.0/16]}\nallow: [198.18.1.0/24]\nrules:\n"
      "  - name: keep\n    match: {port: 1}\n    limit: {rate: 1/s}\n"
      "  - name: change\n    match: {port: 2}\n    limit: {rate: 1/s}\n"
      "  - name: gone\n    match: {port: 3}\n    limit: {rate: 1/s}\n",
      "a.yaml");
  auto b = policy::load_string(
      "sets: {lab: [198.18.0.0/15]}\ndeny: [198.18.9.0/24]\nrules:\n"
      "  - name: keep\n    match: {port: 1}\n    limit: {rate: 1/s}\n"
      "  - name: change\n    match: {port: 2}\n    limit: {rate: 2/s}\n"
      "  - name: new\n    match: {port: 4}\n    limit: {rate: 1/s}\n",
      "b.yaml");
  ASSERT_TRUE(a.ok() && b.ok());
  auto d = diff_policies(a.policy, b.policy);
  auto has = [&](const std::string& prefix) {
    for (const auto& line : d)
      if (line.rfind(prefix, 0) == 0) return true;
    return false;
  };
  EXPECT_TRUE(has("~ set lab"));
  EXPECT_TRUE(has("- rule gone"));
  EXPECT_TRUE(has("+ rule new"));
  EXPECT_TRUE(has("~ rule change"));
  EXPECT_FALSE(has("~ rule keep"));
  EXPECT_TRUE(has("- allow 198.18.1.0/24"));
  EXPECT_TRUE(has("+ deny 198.18.9.0/24"));
}

}  // namespace
}  // namespace rl::daemon
