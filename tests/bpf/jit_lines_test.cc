// SPDX-License-Identifier: GPL-2.0-only
// bench/jit_lines.h against the program the verifier and the JIT really made, and
// scripts/profile-lines.py charging a sample to the line it fell on.
#include "jit_lines.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>

#include "fixture.h"

namespace rl::testing {
namespace {

class JitLinesTest : public BpfTest {};

const bench::JitFunction* holder(const bench::JitLines& l, uint64_t addr) {
  for (const auto& f : l.functions)
    if (addr >= f.start && addr < f.start + f.len) return &f;
  return nullptr;
}

TEST_F(JitLinesTest, EveryLineLiesInAFunctionOfTheProgram) {
  auto l = bench::jit_lines(dp_->prog_fd());
  ASSERT_TRUE(l.ok()) << l.error().str();
  for (const char* name : {"rl_xdp", "rl_limit", "rl_judge", "rl_set_find"})
    EXPECT_TRUE(std::any_of(l->functions.begin(), l->functions.end(), [&](const auto& f) {
      return f.name == name;
    })) << name;
  // A known key's packet makes no call: the parse and the rule lookup are inlined.
  for (const char* name : {"rl_parse_frame", "rl_parse_ip", "rl_match_rule"})
    EXPECT_TRUE(std::none_of(l->functions.begin(), l->functions.end(), [&](const auto& f) {
      return f.name == name;
    })) << name;
  ASSERT_GT(l->lines.size(), 500u);
  for (const auto& line : l->lines)
    ASSERT_NE(holder(*l, line.addr), nullptr) << line.file << ":" << line.line;
  // The rule lookup is inlined: its lines (a header's) are placed in the main program.
  auto ctz = std::find_if(l->lines.begin(), l->lines.end(), [](const auto& line) {
    return line.file == "classify.h" && line.text.find("rl_ctz_table[") != std::string::npos;
  });
  ASSERT_NE(ctz, l->lines.end());
  EXPECT_EQ(holder(*l, ctz->addr)->name, "rl_xdp");
}

TEST_F(JitLinesTest, ASampleIsChargedToTheLineItFellOn) {
  auto l = bench::jit_lines(dp_->prog_fd());
  ASSERT_TRUE(l.ok()) << l.error().str();
  // A line of the limiter (the shared key's hash) with JIT code of its own: a sample two bytes
  // into it.
  auto it = std::find_if(l->lines.begin(), l->lines.end(), [](const auto& line) {
    return line.text.find("h = rl_key_hash(sk,") != std::string::npos;
  });
  ASSERT_NE(it, l->lines.end());
  ASSERT_NE(it + 1, l->lines.end());
  ASSERT_GT((it + 1)->addr, it->addr + 2) << "the line has at least three bytes of code";
  std::string dir = ::testing::TempDir();
  std::string lines = dir + "/jit_lines", ips = dir + "/jit_ips";
  std::ofstream(lines) << bench::format_jit_lines(*l);
  char ip[32];
  std::snprintf(ip, sizeof(ip), "%" PRIx64 "\n", it->addr + 2);
  std::ofstream(ips) << ip << "ffffffff81000000\n";  // and one outside every program
  std::string cmd = std::string(RL_SOURCE_DIR) + "/scripts/profile-lines.py " + lines + " < " + ips;
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof(buf), p)) out += buf;
  ASSERT_EQ(::pclose(p), 0) << out;
  std::string where = it->file + ":" + std::to_string(it->line);
  EXPECT_NE(out.find("1 of 2 samples"), std::string::npos) << out;
  EXPECT_NE(out.find("100.0%  rl_limit"), std::string::npos) << out;
  EXPECT_NE(out.find(where), std::string::npos) << where << "\n" << out;
}

}  // namespace
}  // namespace rl::testing
