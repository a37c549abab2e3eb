// SPDX-License-Identifier: GPL-2.0-only
// The shipped policies work as shipped: they load, merge and compile. The example configuration
// and the docs list exactly the settings of rld's option table.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "compiler/compiler.h"
#include "daemon/config/config.h"
#include "daemon/config/config_options.h"
#include "policy/loader.h"
#include "rl_abi.h"

namespace {

std::set<std::string> table_settings() {
  std::set<std::string> out;
  for (const auto& o : rl::daemon::config_options()) out.insert(o.path());
  return out;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kExample = std::string(RL_POLICY_EXAMPLES) + "/rld.yaml.example";

}  // namespace

TEST(Examples, PolicyDirectoryLoadsAndCompiles) {
  auto r = rl::policy::load_directory(RL_POLICY_EXAMPLES);
  for (const auto& e : r.errors) ADD_FAILURE() << e.str();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.policy.rules.size(), 8u);
  EXPECT_EQ(r.policy.allow.size(), 3u);  // two office prefixes and the monitoring host
  auto c = rl::compiler::compile(r.policy);
  ASSERT_TRUE(c.ok()) << c.error().str();
  // reflection.yaml: UDP from the reflectors' ports, capped per destination.
  auto it = std::find_if(r.policy.rules.begin(), r.policy.rules.end(),
                         [](const auto& rule) { return rule.name == "udp-reflection"; });
  ASSERT_NE(it, r.policy.rules.end());
  EXPECT_EQ(it->match.source_ports.size(), 5u);
  EXPECT_EQ(it->key, rl::policy::KeyKind::kDestinationAddress);
  EXPECT_EQ(c->config.sport_used, 1);
  // ... and the later fragments of large replies, which carry no port, as a class of their own.
  it = std::find_if(r.policy.rules.begin(), r.policy.rules.end(),
                    [](const auto& rule) { return rule.name == "udp-fragments"; });
  ASSERT_NE(it, r.policy.rules.end());
  EXPECT_EQ(it->match.fragments, 1u << RL_FRAG_LATER);
  EXPECT_TRUE(c->config.dims_used & RL_DIM_FRAGMENT);
  // tcp-floods.yaml: RST floods, matched on the flags under a mask.
  it = std::find_if(r.policy.rules.begin(), r.policy.rules.end(),
                    [](const auto& rule) { return rule.name == "tcp-rst-flood"; });
  ASSERT_NE(it, r.policy.rules.end());
  EXPECT_EQ(it->match.tcp_flags, (rl::policy::TcpFlags{0x04, 0x04}));
  EXPECT_TRUE(c->config.dims_used & RL_DIM_TCP_FLAGS);
  // ... and bare ACKs, by flags and length, watched.
  it = std::find_if(r.policy.rules.begin(), r.policy.rules.end(),
                    [](const auto& rule) { return rule.name == "tcp-ack-flood"; });
  ASSERT_NE(it, r.policy.rules.end());
  EXPECT_EQ(it->match.length, (std::vector<rl::policy::PortRange>{{40, 80}}));
  EXPECT_EQ(it->action, rl::policy::Action::kMonitor);
  EXPECT_TRUE(c->config.dims_used & RL_DIM_LENGTH);
}

TEST(Examples, ConfigExampleLoads) {
  rl::daemon::Config cfg;
  auto s = rl::daemon::load_config_file(kExample, cfg);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(cfg.pin_root, "/sys/fs/bpf/rl");
  EXPECT_FALSE(cfg.cluster_enabled());  // the cluster: section is there, Redis is not set
}

TEST(Examples, ConfigExampleListsEverySetting) {
  YAML::Node root = YAML::LoadFile(kExample);
  std::set<std::string> listed;
  for (const auto& kv : root) {
    std::string k = kv.first.as<std::string>();
    if (kv.second.IsMap())
      for (const auto& c : kv.second) listed.insert(k + "." + c.first.as<std::string>());
    else
      listed.insert(k);
  }
  EXPECT_EQ(listed, table_settings());
}

TEST(Examples, ConfigExampleStatesTheKeySize) {
  // What one tracked key costs is the data path's slot, whatever the example says.
  std::string want = std::to_string(sizeof(struct rl_slot)) + " bytes each";
  std::regex line("key_capacity: [0-9]+ +#.*");
  std::smatch m;
  std::string text = read(kExample);
  ASSERT_TRUE(std::regex_search(text, m, line));
  EXPECT_NE(m.str().find(want), std::string::npos) << m.str();
  for (const auto& o : rl::daemon::config_options())
    if (o.key == "key_capacity") {
      EXPECT_NE(o.help.find(want), std::string::npos) << o.help;
    }
}

TEST(Examples, DocsListEverySetting) {
  std::string doc = read(RL_DOCS_DIR "/operations.md");
  auto from = doc.find("<!-- settings");
  auto to = doc.find("<!-- /settings -->");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  std::string table = doc.substr(from, to - from);
  std::set<std::string> listed;
  std::regex row("\\n\\| `([a-z_.]+)` \\| `(--[a-z-]+)`");
  for (auto it = std::sregex_iterator(table.begin(), table.end(), row);
       it != std::sregex_iterator(); ++it) {
    listed.insert((*it)[1]);
    for (const auto& o : rl::daemon::config_options())
      if (o.path() == (*it)[1].str()) {
        EXPECT_EQ(o.long_flag(), (*it)[2].str()) << o.path();
      }
  }
  EXPECT_EQ(listed, table_settings());
}

// The defaults the docs state are the binary's: the settings table's column, and every
// "`setting` (default N ...)" in the prose of any guide, where the setting may drop its "_ms".
TEST(Examples, DocsStateTheBinarysDefaults) {
  const rl::daemon::Config defaults;
  std::string ops = read(RL_DOCS_DIR "/operations.md");
  std::regex row("\\n\\| `([a-z_.]+)` \\| `--[a-z-]+` \\| `([^`]*)` \\|");
  size_t rows = 0;
  for (auto it = std::sregex_iterator(ops.begin(), ops.end(), row); it != std::sregex_iterator();
       ++it)
    for (const auto& o : rl::daemon::config_options())
      if (o.path() == (*it)[1].str()) {
        rows++;
        std::string text = rl::daemon::option_text(o, defaults);
        EXPECT_EQ((*it)[2].str(), text.empty() ? "''" : text) << o.path();
      }
  EXPECT_GT(rows, 30u) << "the settings table's rows were not found";

  std::regex prose("`([a-z_]+)` \\(default ([0-9][0-9,]*)");
  for (const auto& entry : std::filesystem::directory_iterator(RL_DOCS_DIR)) {
    if (entry.path().extension() != ".md") continue;
    std::string doc = read(entry.path().string());
    for (auto it = std::sregex_iterator(doc.begin(), doc.end(), prose);
         it != std::sregex_iterator(); ++it) {
      std::string name = (*it)[1].str(), value = (*it)[2].str();
      value.erase(std::remove(value.begin(), value.end(), ','), value.end());
      for (const auto& o : rl::daemon::config_options()) {
        if (o.key != name && std::string(o.key) != name + "_ms") continue;
        EXPECT_EQ(value, rl::daemon::option_text(o, defaults))
            << entry.path().filename().string() << ": `" << name << "` (default " << (*it)[2].str();
      }
    }
  }
}
