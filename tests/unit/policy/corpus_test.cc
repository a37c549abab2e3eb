// SPDX-License-Identifier: GPL-2.0-only
// Broken policies, one per file in corpus/, each stating on its first line the error it must
// produce: "# expect: LINE:COL: error: <message substring>".
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "policy/loader.h"

namespace rl::policy {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> corpus_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(RL_POLICY_CORPUS))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Expectation {
  int line = 0;
  int column = 0;
  std::string message;
};

std::optional<Expectation> expectation(const std::string& path) {
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  static const std::regex kExpect(R"(^# expect: (\d+):(\d+): error: (.+)$)");
  std::smatch m;
  if (!std::regex_match(first, m, kExpect)) return std::nullopt;
  return Expectation{std::stoi(m[1]), std::stoi(m[2]), m[3]};
}

class Corpus : public ::testing::TestWithParam<std::string> {};

TEST_P(Corpus, ReportsTheExpectedError) {
  const std::string& path = GetParam();
  auto want = expectation(path);
  ASSERT_TRUE(want) << path << ": first line must be '# expect: LINE:COL: error: <message>'";
  auto result = load_files({path});
  // One mistake, one message: a second one would be a cascade the operator has to see through.
  EXPECT_EQ(result.errors.size(), 1u);
  std::string got;
  for (const auto& e : result.errors) {
    got += "  " + e.str() + "\n";
    if (e.where.file == path && e.where.line == want->line && e.where.column == want->column &&
        e.message.find(want->message) != std::string::npos)
      return;
  }
  ADD_FAILURE() << path << ": expected " << want->line << ":" << want->column
                << ": error: " << want->message << "\ngot:\n"
                << got;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).stem().string();
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Policy, Corpus, ::testing::ValuesIn(corpus_files()), test_name);

TEST(CorpusSize, AtLeastThirtyCases) { EXPECT_GE(corpus_files().size(), 30u); }

}  // namespace
}  // namespace rl::policy
