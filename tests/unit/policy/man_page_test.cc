// SPDX-License-Identifier: GPL-2.0-only
// rl-policy(5) against the loader: every key a policy file may hold is documented, every key the
// page documents is one the loader accepts, and so for the values of `key:`. The page is written
// by hand; this keeps it from drifting from the schema.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "policy/describe.h"
#include "policy/fragment.h"
#include "policy/loader.h"

namespace rl::policy::detail {
namespace {

std::vector<std::string> page_lines() {
  std::ifstream in(RL_POLICY_MAN_PAGE);
  EXPECT_TRUE(in) << RL_POLICY_MAN_PAGE;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The words of a macro line: `.BR ports " (or " port )` -> {ports, " (or ", port, )}.
std::vector<std::string> macro_args(const std::string& line) {
  std::vector<std::string> args;
  std::string cur;
  bool quoted = false, any = false;
  for (char c : line.substr(line.find(' ') + 1)) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any) args.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
      any = true;
    }
  }
  if (any) args.push_back(cur);
  return args;
}

// The keys the page documents: the bold words of each `.TP` item's tag (`.B name`, `.BR
// malformed: " pass | drop"`, `.BR allow ", " deny`), without a trailing colon.
std::set<std::string> documented_keys() {
  std::set<std::string> keys;
  auto lines = page_lines();
  for (size_t i = 1; i < lines.size(); i++) {
    if (lines[i - 1] != ".TP") continue;
    const std::string& tag = lines[i];
    std::vector<std::string> bold;
    if (tag.rfind(".B ", 0) == 0) {
      bold = macro_args(tag);
    } else if (tag.rfind(".BR ", 0) == 0) {
      auto args = macro_args(tag);
      for (size_t a = 0; a < args.size(); a += 2) bold.push_back(args[a]);
    } else {
      ADD_FAILURE() << "a .TP tag this test cannot read (use .B or .BR): " << tag;
      continue;
    }
    for (auto word : bold) {
      if (!word.empty() && word.back() == ':') word.pop_back();
      EXPECT_TRUE(std::regex_match(word, std::regex("[a-z0-9_]+"))) << "tag " << tag;
      keys.insert(word);
    }
  }
  return keys;
}

// The values the page lists under `key:` (`.IP \fBsource_prefix\fR 4`).
std::set<std::string> documented_key_kinds() {
  std::set<std::string> kinds;
  std::smatch m;
  for (const auto& line : page_lines())
    if (std::regex_match(line, m, std::regex(R"(\.IP \\fB([a-z_]+)\\fR 4)"))) kinds.insert(m[1]);
  return kinds;
}

TEST(PolicyManPage, DocumentsEveryKeyTheSchemaAcceptsAndNoOther) {
  std::set<std::string> accepted;
  for (const Schema* s : policy_schemas())
    for (const auto& k : s->keys) accepted.insert(k);
  ASSERT_GT(accepted.size(), 30u);
  std::set<std::string> documented = documented_keys();
  for (const auto& k : accepted)
    EXPECT_TRUE(documented.count(k)) << "rl-policy(5) does not document '" << k << "'";
  for (const auto& k : documented)
    EXPECT_TRUE(accepted.count(k)) << "rl-policy(5) documents '" << k << "', which no policy "
                                   << "file may hold";
}

TEST(PolicyManPage, DocumentsEveryKindOfKey) {
  std::set<std::string> kinds;
  // key_name() names every kind, and an out-of-range value as the default kind.
  for (int k = 0; k < 32; k++) kinds.insert(key_name(static_cast<KeyKind>(k)));
  ASSERT_GE(kinds.size(), 7u);
  EXPECT_EQ(documented_key_kinds(), kinds);
  for (const auto& kind : documented_key_kinds()) {
    auto r = load_string("rules:\n  - name: r\n    limit: {rate: 10/s}\n    key: " + kind + "\n",
                         "kinds.yaml");
    EXPECT_TRUE(r.ok()) << kind << ": " << (r.errors.empty() ? "" : r.errors[0].str());
  }
}

}  // namespace
}  // namespace rl::policy::detail
