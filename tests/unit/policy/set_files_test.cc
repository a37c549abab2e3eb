// SPDX-License-Identifier: GPL-2.0-only
// Source sets read from files (policy/set_files.h): the line format, the defences of the policy
// loader, errors at file:line:column, and the stamps a reload compares.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "policy/loader.h"
#include "policy/set_files.h"
#include "policy_test_util.h"
#include "scratch_dir.h"

namespace rl::policy {
namespace {

using test_util::all_errors;

class SetFiles : public rl::testing::ScratchDirTest {
 protected:
  SetFiles() : ScratchDirTest("rl_set_files_test_") {}

  LoadResult load(const std::string& sets, LoadLimits limits = {}) {
    write("p.yaml", "sets:\n" + sets +
                        "rules:\n  - name: r\n    match: {sources: [feed]}\n"
                        "    limit: {rate: 10/s}\n");
    return load_directory(dir_.string(), limits);
  }
  const SourceSet* feed(const LoadResult& r) {
    for (const auto& s : r.policy.sets)
      if (s.name == "feed") return &s;
    return nullptr;
  }
};

TEST_F(SetFiles, ReadsOnePrefixPerLineWithComments) {
  write("feed.txt",
        "# a feed\n"
        "198.18.0.0/24 ; SBL 1\n"
        "\t2001:db8::/32   # documentation\n"
        "\n"
        "198.18.1.1\r\n"
        "198.18.0.0/24\n");
  auto r = load("  feed: {file: feed.txt}\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const SourceSet* s = feed(r);
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->prefixes.size(), 3u);  // the repeat counts once
  EXPECT_EQ(s->prefixes[0].str(), "198.18.0.0/24");
  EXPECT_EQ(s->prefixes[1].str(), "198.18.1.1/32");
  EXPECT_EQ(s->prefixes[2].str(), "2001:db8::/32");
  EXPECT_EQ(s->source.path, (dir_ / "feed.txt").string());
  EXPECT_EQ(s->source.files.size(), 1u);
}

TEST_F(SetFiles, ABadLineIsAnErrorAtItsLineAndColumnAndRefusesTheLoad) {
  write("feed.txt", "198.18.0.0/24\n  198.18.0.1/24\n198.18.2.0/24 extra\n300.1.1.1\n");
  auto r = load("  feed: {file: feed.txt}\n");
  ASSERT_FALSE(r.ok());
  std::string f = (dir_ / "feed.txt").string();
  ASSERT_EQ(r.errors.size(), 3u) << all_errors(r);  // the rule is not blamed for its set
  EXPECT_EQ(r.errors[0].where.str(), f + ":2:3");
  EXPECT_NE(r.errors[0].message.find("host bits set"), std::string::npos);
  EXPECT_EQ(r.errors[1].where.str(), f + ":3:15");
  EXPECT_NE(r.errors[1].message.find("one prefix per line"), std::string::npos);
  EXPECT_EQ(r.errors[2].where.str(), f + ":4:1");
}

TEST_F(SetFiles, ReadsEveryVisibleFileOfADirectory) {
  std::filesystem::create_directories(dir_ / "feeds" / "sub");
  write("feeds/a.txt", "198.18.0.0/24\n");
  write("feeds/b.netset", "198.18.1.0/24\n");
  write("feeds/.b.netset.part", "not a prefix\n");
  write("feeds/b.netset~", "not a prefix\n");
  write("feeds/sub/c.txt", "not a prefix\n");
  auto r = load("  feed: {dir: feeds}\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(feed(r)->prefixes.size(), 2u);
  EXPECT_EQ(feed(r)->source.files.size(), 3u);  // the directory, then its two files
  EXPECT_TRUE(feed(r)->source.directory);
}

TEST_F(SetFiles, RefusesWhatThePolicyLoaderRefuses) {
  write("big.txt", std::string(2 << 20, '#'));
  ::mkfifo((dir_ / "fifo").c_str(), 0600);
  std::filesystem::create_symlink("/etc/passwd", dir_ / "out");
  LoadLimits small;
  small.max_set_file_bytes = 1 << 20;
  for (const char* name : {"big.txt", "fifo", "out", "missing"}) {
    auto r = load(std::string("  feed: {file: ") + name + "}\n", small);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].where.file, (dir_ / name).string());
  }
}

TEST_F(SetFiles, BoundsThePrefixesOfALoad) {
  std::string text;
  for (int i = 0; i < 200; i++) text += "198.18.0." + std::to_string(i) + "\n";
  write("feed.txt", text);
  LoadLimits limits;
  limits.max_set_prefixes = 100;
  auto r = load("  feed: {file: feed.txt}\n", limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0].where.line, 101);
  EXPECT_NE(r.errors[0].message.find("more than 100 prefixes"), std::string::npos);
}

TEST_F(SetFiles, AnEmptyFileIsAnEmptySetNotAnError) {
  write("feed.txt", "# nothing listed today\n");
  auto r = load("  feed: {file: feed.txt}\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_TRUE(feed(r)->prefixes.empty());
}

TEST_F(SetFiles, NamesOneOfFileAndDir) {
  auto r = load("  feed: {file: a, dir: b}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(all_errors(r).find("either file: or dir:"), std::string::npos) << all_errors(r);
  r = load("  feed: {path: a}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(all_errors(r).find("unknown key 'path'"), std::string::npos) << all_errors(r);
}

TEST_F(SetFiles, StampsChangeExactlyWhenAFileDoes) {
  std::filesystem::create_directories(dir_ / "feeds");
  write("feeds/a.txt", "198.18.0.0/24\n");
  // A feed's update: a hidden file, then renamed over the old one.
  write("feeds/.a.txt.part", "198.18.0.0/23\n");
  auto r = load("  feed: {dir: feeds}\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const SetSource& src = feed(r)->source;
  EXPECT_EQ(stamp_set_source(src), src.files);
  std::filesystem::rename(dir_ / "feeds/.a.txt.part", dir_ / "feeds/a.txt");
  EXPECT_NE(stamp_set_source(src), src.files);
}

// With a cache, a reload reads again only the files that changed, and gets the same sets.
TEST_F(SetFiles, ACacheReadsOnlyTheFilesThatChanged) {
  std::filesystem::create_directories(dir_ / "feeds");
  write("feeds/a.txt", "198.18.0.0/24\n198.18.9.0/24\n");
  write("feeds/b.txt", "198.18.1.0/24\n198.18.0.0/24\n");
  SetFileCache cache;
  LoadLimits limits;
  limits.set_cache = &cache;
  auto first = load("  feed: {dir: feeds}\n", limits);
  ASSERT_TRUE(first.ok()) << all_errors(first);
  EXPECT_EQ(cache.hits(), 0u);
  write("feeds/.b.part", "198.18.2.0/24\n");
  std::filesystem::rename(dir_ / "feeds/.b.part", dir_ / "feeds/b.txt");
  auto second = load("  feed: {dir: feeds}\n", limits);
  ASSERT_TRUE(second.ok()) << all_errors(second);
  EXPECT_EQ(cache.hits(), 1u) << "a.txt came from the cache";
  auto fresh = load("  feed: {dir: feeds}\n");
  ASSERT_TRUE(fresh.ok()) << all_errors(fresh);
  EXPECT_EQ(feed(second)->prefixes, feed(fresh)->prefixes);
  EXPECT_EQ(feed(second)->source.files, feed(fresh)->source.files);
  EXPECT_EQ(feed(second)->prefixes.size(), 3u);
}

}  // namespace
}  // namespace rl::policy
