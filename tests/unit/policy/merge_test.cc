// SPDX-License-Identifier: GPL-2.0-only
// Policies spread over several files: merging, cross-file checks, directory loading.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "policy/loader.h"
#include "policy_test_util.h"
#include "scratch_dir.h"

namespace rl::policy {
namespace {

namespace fs = std::filesystem;

using test_util::all_errors;

class PolicyDir : public rl::testing::ScratchDirTest {
 protected:
  PolicyDir() : ScratchDirTest("rl_policy_test_") {}

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
};

TEST_F(PolicyDir, MergesSetsAndRulesAcrossFiles) {
  std::string sets = write("10-sets.yaml", "sets:\n  office: [203.0.113.0/24]\nallow: [office]\n");
  std::string rules = write("20-rules.yaml",
                            "rules:\n"
                            "  - name: office-ssh\n"
                            "    match: {sources: [office], protocol: tcp, port: 22}\n"
                            "    limit: {rate: 10/s}\n"
                            "deny: [198.51.100.0/24]\n");
  auto r = load_files({sets, rules});
  ASSERT_TRUE(r.ok()) << all_errors(r);
  ASSERT_EQ(r.policy.sets.size(), 1u);
  EXPECT_EQ(r.policy.sets[0].where.file, sets);
  ASSERT_EQ(r.policy.rules.size(), 1u);
  EXPECT_EQ(r.policy.rules[0].match.sources, std::vector<std::string>{"office"});
  EXPECT_EQ(r.policy.rules[0].where.file, rules);
  EXPECT_EQ(r.policy.allow.size(), 1u);
  EXPECT_EQ(r.policy.deny.size(), 1u);
}

TEST_F(PolicyDir, PriorityTiesKeepFileOrder) {
  write("b.yaml", "rules:\n  - {name: b1, match: {port: 2}, limit: {rate: 1/s}}\n");
  write("a.yaml",
        "rules:\n"
        "  - {name: a1, match: {port: 1}, limit: {rate: 1/s}}\n"
        "  - {name: a2, priority: 200, match: {port: 4}, limit: {rate: 1/s}}\n"
        "  - {name: a3, match: {port: 3}, limit: {rate: 1/s}}\n");
  write("c.yml", "rules:\n  - {name: c1, priority: 1, limit: {rate: 1/s}}\n");
  auto r = load_directory(dir_.string());
  ASSERT_TRUE(r.ok()) << all_errors(r);
  std::vector<std::string> names;
  for (const auto& rule : r.policy.rules) names.push_back(rule.name);
  EXPECT_EQ(names, (std::vector<std::string>{"c1", "a1", "a3", "b1", "a2"}));
}

TEST_F(PolicyDir, DirectorySkipsOtherAndHiddenFiles) {
  write("policy.yaml", "rules:\n  - {name: a, limit: {rate: 1/s}}\n");
  write("notes.txt", "not: [yaml");
  write(".policy.yaml", "not: [yaml");
  write("policy.yaml.bak", "not: [yaml");
  fs::create_directories(dir_ / "sub.yaml");
  auto r = load_directory(dir_.string());
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.policy.rules.size(), 1u);
}

TEST_F(PolicyDir, DuplicateRuleNamesNameBothLocations) {
  std::string a = write("a.yaml", "rules:\n  - name: web\n    limit: {rate: 1/s}\n");
  std::string b =
      write("b.yaml",
            "rules:\n  - name: other\n    match: {protocol: udp}\n    limit: {rate: 1/s}\n"
            "  - name: web\n    limit: {rate: 2/s}\n");
  auto r = load_files({a, b});
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].str(),
            b + ":5:11: error: duplicate rule name 'web' (first defined at " + a + ":2:11)");
}

TEST_F(PolicyDir, DuplicateSetNamesAcrossFiles) {
  std::string a = write("a.yaml", "sets:\n  office: [192.0.2.0/24]\n");
  std::string b = write("b.yaml", "sets:\n  office: [198.51.100.0/24]\n");
  auto r = load_files({a, b});
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].str(),
            b + ":2:3: error: source set 'office' is already defined at " + a + ":2:3");
}

TEST_F(PolicyDir, MalformedMustAgree) {
  std::string a = write("a.yaml", "malformed: drop\n");
  std::string b = write("b.yaml", "malformed: drop\n");
  std::string c = write("c.yaml", "malformed: pass\n");
  auto agree = load_files({a, b});
  ASSERT_TRUE(agree.ok()) << all_errors(agree);
  EXPECT_EQ(agree.policy.malformed, Verdict::kDrop);
  auto r = load_files({a, b, c});
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].str(),
            c + ":1:12: error: malformed: pass conflicts with malformed: drop at " + a +
                ":1:12; files must agree");
}

TEST_F(PolicyDir, SetUsedAcrossFilesMustExistSomewhere) {
  std::string a = write("a.yaml", "sets:\n  scanners: [198.18.0.0/15]\n");
  std::string b = write("b.yaml",
                        "rules:\n  - name: s\n    match: {sources: [scaners]}\n"
                        "    limit: {rate: 1/s}\n");
  auto r = load_files({a, b});
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].str(),
            b + ":3:23: error: undefined source set 'scaners' (did you mean 'scanners'?)");
}

TEST_F(PolicyDir, ShadowingAcrossFiles) {
  std::string a = write("a.yaml",
                        "rules:\n  - {name: first, match: {protocol: udp, port: 53}, "
                        "limit: {rate: 1/s}}\n");
  std::string b = write("b.yaml",
                        "rules:\n  - {name: second, match: {port: 53, protocol: 17}, "
                        "limit: {rate: 5/s}}\n");
  auto r = load_files({a, b});
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].str(), b + ":2:5: error: rule 'second' can never match: rule 'first' at " +
                                   a + ":2:5 matches the same packets first");
}

TEST_F(PolicyDir, AtMost1024RulesInTotal) {
  auto rules = [](int from, int to) {
    std::string text = "rules:\n";
    for (int i = from; i < to; i++)
      text += "  - {name: r" + std::to_string(i) + ", match: {port: " + std::to_string(i + 1) +
              "}, limit: {rate: 1/s}}\n";
    return text;
  };
  std::string a = write("a.yaml", rules(0, 1000));
  std::string b = write("b.yaml", rules(1000, 1024));
  auto fits = load_files({a, b});
  EXPECT_TRUE(fits.ok()) << all_errors(fits);
  std::string c = write("c.yaml", rules(1024, 1030));
  auto r = load_files({a, b, c});
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].str(),
            c + ":2:5: error: too many rules: a policy holds at most 1024 (rld.yaml max_rules)");
  policy::LoadLimits more;
  more.max_rules = 2048;
  auto larger = policy::load_files({a, b, c}, more);
  EXPECT_TRUE(larger.ok()) << all_errors(larger);
}

TEST_F(PolicyDir, ErrorsAreOrderedByFileThenLine) {
  std::string a = write("a.yaml",
                        "rules:\n  - name: x\n    limit: {rate: 1/s}\n"
                        "  - name: bad name\n    limit: {rate: 1/s}\n");
  std::string b = write("b.yaml", "rules:\n  - name: x\n    limit: {rate: 2/s}\n");
  auto r = load_files({a, b});
  ASSERT_EQ(r.errors.size(), 2u) << all_errors(r);
  EXPECT_EQ(r.errors[0].where.file, a);
  EXPECT_EQ(r.errors[1].where.file, b);
}

TEST_F(PolicyDir, UnreadableFilesAreNamed) {
  std::string ok = write("ok.yaml", "rules:\n  - {name: a, limit: {rate: 1/s}}\n");
  auto r = load_files({ok, path("missing.yaml")});
  ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
  EXPECT_EQ(r.errors[0].str(),
            path("missing.yaml") + ": error: cannot read: No such file or directory");
}

TEST_F(PolicyDir, MissingOrEmptyDirectoryIsAnError) {
  auto empty = load_directory(dir_.string());
  ASSERT_EQ(empty.errors.size(), 1u);
  EXPECT_EQ(empty.errors[0].str(), dir_.string() + ": error: no policy files (*.yaml, *.yml)");
  EXPECT_TRUE(empty.no_files);
  auto missing = load_directory(path("nope"));
  EXPECT_FALSE(missing.no_files);
  ASSERT_EQ(missing.errors.size(), 1u);
  EXPECT_NE(missing.errors[0].str().find("cannot read policy directory"), std::string::npos);
}

}  // namespace
}  // namespace rl::policy
