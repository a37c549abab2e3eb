// The shipped policies work as shipped: they load, merge and compile.
#include <gtest/gtest.h>

#include "compiler/compiler.h"
#include "daemon/config.h"
#include "policy/loader.h"

TEST(Examples, PolicyDirectoryLoadsAndCompiles) {
  auto r = rl::policy::load_directory(RL_POLICY_EXAMPLES);
  for (const auto& e : r.errors) ADD_FAILURE() << e.str();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.policy.rules.size(), 4u);
  EXPECT_EQ(r.policy.allow.size(), 3u);  // two office prefixes and the monitoring host
  auto c = rl::compiler::compile(r.policy);
  ASSERT_TRUE(c.ok()) << c.error().str();
}

TEST(Examples, ConfigExampleLoads) {
  rl::daemon::Config cfg;
  auto s = rl::daemon::load_config_file(std::string(RL_POLICY_EXAMPLES) + "/rld.yaml.example", cfg);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(cfg.pin_root, "/sys/fs/bpf/rl");
}
