// SPDX-License-Identifier: GPL-2.0-only
// The bounds of one load: nesting, YAML nodes with aliases expanded (across every file), the
// deadline, and what the loader reads from hostile files. Each refusal is one clear error at
// file:line:column, quick, and printable.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "policy/loader.h"
#include "policy/yaml_scan.h"

namespace rl::policy {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string bomb(int levels) {
  std::string text = "sets:\n  a0: &a0 [198.18.0.1, 198.18.0.2, 198.18.0.3, 198.18.0.4]\n";
  for (int i = 1; i < levels; i++) {
    text += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; j++) text += (j ? ", *a" : "*a") + std::to_string(i - 1);
    text += "]\n";
  }
  return text;
}

std::string set_of(size_t n) {
  std::string text = "sets:\n  big:\n";
  for (size_t i = 0; i < n; i++)
    text += "    - 10." + std::to_string(i >> 16) + "." + std::to_string((i >> 8) & 255) + "." +
            std::to_string(i & 255) + "\n";
  return text;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST(LoadLimits, DeepNestingIsRefusedWhereItCrossesTheBound) {
  auto t0 = Clock::now();
  auto r = load_string("rules: " + std::string(100'000, '[') + "\n", "deep.yaml");
  EXPECT_LT(seconds_since(t0), 2.0);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].where.line, 1);
  EXPECT_EQ(r.errors[0].message, "nested deeper than 32 levels, the most a policy file may nest");
  // 32 levels is within the bound (and then the schema says what is wrong).
  auto ok = load_string("rules: " + std::string(31, '[') + std::string(31, ']') + "\n", "d.yaml");
  ASSERT_FALSE(ok.errors.empty());
  EXPECT_EQ(ok.errors[0].message.find("nested deeper"), std::string::npos);
}

TEST(LoadLimits, AliasBombIsRefusedWithoutExpanding) {
  auto t0 = Clock::now();
  auto r = load_string(bomb(10), "bomb.yaml");  // 4 * 10^9 entries when expanded
  EXPECT_LT(seconds_since(t0), 2.0);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].where.line, 7);
  EXPECT_NE(r.errors[0].message.find("aliases expand to more than 300000 YAML nodes"),
            std::string::npos)
      << r.errors[0].str();
  // A few aliases are fine: they are read where the schema reads them.
  auto small = load_string(bomb(2), "small.yaml");
  for (const auto& e : small.errors)
    EXPECT_EQ(e.message.find("aliases expand"), std::string::npos) << e.str();
}

TEST(LoadLimits, ScanCountsAliasesAsWhatTheyStandFor) {
  detail::ScanLimits limits{32, 1'000'000, 0, Clock::time_point::max()};
  auto three = detail::scan_yaml(bomb(3), limits);
  ASSERT_FALSE(three.problem) << three.problem->message;
  // Root map, 'sets' and its map, three keys; a0 is a sequence of 4, a1 ten of it, a2 ten of a1.
  EXPECT_EQ(three.nodes, 3u + 3 + 5 + (1 + 10 * 5) + (1 + 10 * 51));
  limits.max_nodes = 100;
  EXPECT_TRUE(detail::scan_yaml(bomb(3), limits).problem);
  limits.max_depth = 2;
  limits.max_nodes = 1'000'000;
  auto deep = detail::scan_yaml("a: {b: {c: 1}}\n", limits);
  ASSERT_TRUE(deep.problem);
  EXPECT_EQ(deep.problem->mark.line, 0);
  EXPECT_EQ(deep.problem->mark.column, 7);
}

TEST(LoadLimits, NodeBudgetIsForTheWholeLoad) {
  fs::path dir = fs::temp_directory_path() / ("rl_limits_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "a.yaml") << set_of(2000);
  std::ofstream(dir / "b.yaml") << "rules:\n  - {name: r, match: {sources: [big]}, limit: "
                                   "{rate: 1/s}}\n";
  LoadLimits limits;
  EXPECT_TRUE(load_directory(dir.string(), limits).ok());
  limits.max_nodes = 2010;  // a.yaml takes 2005, b.yaml more than the rest
  auto r = load_directory(dir.string(), limits);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].where.file, (dir / "b.yaml").string());
  EXPECT_NE(r.errors[0].message.find("more than 2010 YAML nodes"), std::string::npos)
      << r.errors[0].str();
  fs::remove_all(dir);
}

TEST(LoadLimits, DeadlineStopsTheLoad) {
  LoadLimits limits;
  limits.deadline = Clock::now() - std::chrono::milliseconds(1);
  auto r = load_string(set_of(20'000), "big.yaml", limits);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("took longer than its time limit"), std::string::npos)
      << r.errors[0].str();
}

TEST(LoadLimits, DuplicateSetEntriesAreErrors) {
  auto r = load_string(
      "sets:\n  s: [198.18.0.0/24, 198.18.1.0/24]\n  t:\n    - 198.18.0.1\n"
      "    - 198.18.0.2\n    - 198.18.0.1/32\n",
      "dup.yaml");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].str(),
            "dup.yaml:6:7: error: duplicate entry '198.18.0.1/32' in set 't' (first given at "
            "line 4)");
  // 65,537 entries with one repeated: refused quickly, naming the repeat.
  auto t0 = Clock::now();
  std::string big = set_of(65'536) + "    - 10.0.0.7\n";
  auto many = load_string(big, "many.yaml");
  EXPECT_LT(seconds_since(t0), 10.0);
  ASSERT_EQ(many.errors.size(), 1u);
  EXPECT_EQ(many.errors[0].str(),
            "many.yaml:65539:7: error: duplicate entry '10.0.0.7/32' in set 'big' (first given "
            "at line 10)");
}

TEST(LoadLimits, HostileFilesAreRefusedAndNeverQuoted) {
  fs::path dir = fs::temp_directory_path() / ("rl_hostile_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "outside");
  const std::string marker = "rl-unit-secret-6b2e";
  std::ofstream(dir / "outside" / "secret") << "root:" << marker << ":0:0\n";
  ::chmod((dir / "outside" / "secret").c_str(), 0600);
  fs::create_directories(dir / "p");
  fs::create_symlink(dir / "outside" / "secret", dir / "p" / "shadow.yaml");
  fs::create_symlink("/dev/zero", dir / "p" / "zero.yaml");
  fs::create_symlink("nowhere.yaml", dir / "p" / "dangling.yaml");
  ASSERT_EQ(::mkfifo((dir / "p" / "fifo.yaml").c_str(), 0600), 0);
  for (const char* name : {"shadow.yaml", "zero.yaml", "dangling.yaml", "fifo.yaml"}) {
    auto t0 = Clock::now();
    auto r = load_files({(dir / "p" / name).string()});
    EXPECT_LT(seconds_since(t0), 2.0) << name;
    ASSERT_EQ(r.errors.size(), 1u) << name;
    EXPECT_EQ(r.errors[0].str().find(marker), std::string::npos);
    EXPECT_EQ(r.errors[0].str().find("root:"), std::string::npos);
  }
  auto all = load_directory((dir / "p").string());
  EXPECT_EQ(all.errors.size(), 4u);
  for (const auto& e : all.errors) EXPECT_EQ(e.str().find(marker), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rl::policy
