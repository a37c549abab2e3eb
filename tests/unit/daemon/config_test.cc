// SPDX-License-Identifier: GPL-2.0-only
// rld's configuration: the option table's parser, its errors and `rld --check-config`'s checks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "daemon/config/check_config.h"
#include "daemon/config/config.h"
#include "daemon/config/config_options.h"

namespace rl::daemon {
namespace {

namespace fs = std::filesystem;

class ConfigFile : public ::testing::Test {
 protected:
  fs::path path = fs::temp_directory_path() / ("rl-cfg-" + std::to_string(::getpid()) + ".yaml");
  void TearDown() override { fs::remove(path); }
  // The error loading `text`, or "" when it loads.
  std::string error(const std::string& text, Config& c) {
    std::ofstream(path) << text;
    auto s = load_config_file(path, c);
    return s.ok() ? "" : s.error().message;
  }
  std::string error(const std::string& text) {
    Config c;
    return error(text, c);
  }
};

TEST_F(ConfigFile, UnknownKeysSuggestTheClosest) {
  EXPECT_EQ(error("interfaces: [eth0]\nxdp_mdoe: native\n"),
            path.string() + ":2:1: error: unknown key 'xdp_mdoe' (did you mean 'xdp_mode'?)");
  EXPECT_EQ(error("cluster:\n  redis_hots: a\n"),
            path.string() +
                ":2:3: error: unknown key 'redis_hots' in cluster (did you mean 'redis_host'?)");
  EXPECT_EQ(error("clustr: {}\n"),
            path.string() + ":1:1: error: unknown key 'clustr' (did you mean 'cluster'?)");
  EXPECT_EQ(error("zzz: 1\n"), path.string() + ":1:1: error: unknown key 'zzz'");
}

TEST_F(ConfigFile, SettingsOutsideTheirSectionSayWhereTheyGo) {
  EXPECT_EQ(
      error("redis_host: 10.0.0.5\n"),
      path.string() + ":1:1: error: unknown key 'redis_host' (it belongs in the cluster: section)");
  EXPECT_EQ(error("cluster:\n  pin_root: /x\n"),
            path.string() +
                ":2:3: error: unknown key 'pin_root' in cluster (it belongs at the top level)");
}

TEST_F(ConfigFile, WrongTypesAndValuesPointAtTheValue) {
  EXPECT_EQ(error("key_capacity: lots\n"),
            path.string() + ":1:15: error: key_capacity: expected a whole number, got 'lots'");
  EXPECT_EQ(error("key_capacity: -1\n"),
            path.string() + ":1:15: error: key_capacity: -1 is out of range: 64-268435456 keys");
  EXPECT_EQ(error("key_capacity: 10\n"),
            path.string() + ":1:15: error: key_capacity: 10 is out of range: 64-268435456 keys");
  EXPECT_EQ(error("key_capacity: 99999999999999999999999\n"),
            path.string() +
                ":1:15: error: key_capacity: 99999999999999999999999 is out of "
                "range: 64-268435456");
  EXPECT_EQ(error("xdp_mode: nativ\n"),
            path.string() +
                ":1:11: error: xdp_mode: 'nativ' is not one of auto, native, "
                "generic (did you mean 'native'?)");
  EXPECT_EQ(error("interfaces: eth0\n"),
            path.string() + ":1:13: error: interfaces: expected a list, e.g. [eth0]");
  EXPECT_EQ(error("pin_root: [a]\n"),
            path.string() + ":1:11: error: pin_root: expected a single value, got a list");
  EXPECT_EQ(error("detach_on_exit: maybe\n"),
            path.string() + ":1:17: error: detach_on_exit: expected true or false, got 'maybe'");
  EXPECT_EQ(error("pin_root: relative/dir\n"),
            path.string() + ":1:11: error: pin_root: must be an absolute path");
  EXPECT_EQ(error("cluster: 3\n"),
            path.string() + ":1:10: error: cluster: expected a mapping of settings");
  EXPECT_EQ(error("cluster:\n  redis_port: 0\n"),
            path.string() + ":2:15: error: cluster.redis_port: 0 is out of range: 1-65535");
  EXPECT_NE(error("a: [\n").find(path.string() + ":"), std::string::npos);
}

TEST_F(ConfigFile, LoadsEverySettingAndBadInputChangesNothing) {
  Config c;
  ASSERT_EQ(error("interfaces: [eth0, eth1]\nxdp_mode: generic\nkey_capacity: 4096\n"
                  "metrics_listen:\ndetach_on_exit: yes\n"
                  "cluster:\n  redis_socket: /run/r.sock\n  nodes: 3\n  connect_timeout_ms: 50\n",
                  c),
            "");
  EXPECT_EQ(c.interfaces, (std::vector<std::string>{"eth0", "eth1"}));
  EXPECT_EQ(c.xdp_mode, "generic");
  EXPECT_EQ(c.key_capacity, 4096u);
  EXPECT_EQ(c.metrics_listen, "");
  EXPECT_TRUE(c.detach_on_exit);
  EXPECT_EQ(c.redis_socket, "/run/r.sock");
  EXPECT_EQ(c.cluster_nodes, 3u);
  EXPECT_EQ(c.redis_connect_timeout_ms, 50u);
  EXPECT_TRUE(c.cluster_enabled());
  Config sentinel;
  ASSERT_EQ(error("cluster:\n  redis_sentinels: [10.0.0.5:26379, '[2001:db8::6]:26379']\n"
                  "  redis_master_name: rl\n  redis_sentinel_password: s3cret\n",
                  sentinel),
            "");
  EXPECT_EQ(sentinel.redis_sentinels,
            (std::vector<std::string>{"10.0.0.5:26379", "[2001:db8::6]:26379"}));
  EXPECT_EQ(sentinel.redis_master_name, "rl");
  EXPECT_EQ(sentinel.redis_sentinel_password, "s3cret");
  EXPECT_TRUE(sentinel.cluster_enabled()) << "sentinels alone name the cluster's Redis";
  Config before = c;
  EXPECT_NE(error("xdp_mode: native\nkey_capacity: 1\n", c), "");
  EXPECT_EQ(c.xdp_mode, before.xdp_mode);
  EXPECT_EQ(c.key_capacity, before.key_capacity);
}

TEST(ConfigOptions, EverySettingHasOneFlagAndOneKey) {
  std::set<std::string> flags, keys;
  for (const auto& o : config_options()) {
    EXPECT_TRUE(flags.insert(o.long_flag()).second) << o.long_flag();
    EXPECT_TRUE(keys.insert(o.path()).second) << o.path();
    EXPECT_FALSE(o.help.empty()) << o.path();
    // The defaults pass their own checks.
    EXPECT_TRUE(check_option(o, Config{}).ok()) << o.path();
  }
}

TEST_F(ConfigFile, InterfaceWaitIsWholeSecondsUpToAnHour) {
  Config c;
  EXPECT_EQ(c.interface_wait_seconds, 60u) << "the default";
  EXPECT_EQ(error("interface_wait_seconds: 5\n", c), "");
  EXPECT_EQ(c.interface_wait_seconds, 5u);
  EXPECT_EQ(error("interface_wait_seconds: 0\n", c), "") << "0: fail at once";
  EXPECT_EQ(c.interface_wait_seconds, 0u);
  EXPECT_NE(error("interface_wait_seconds: 3601\n").find("out of range: 0-3600 s"),
            std::string::npos)
      << error("interface_wait_seconds: 3601\n");
  EXPECT_NE(error("interface_wait_seconds: 1m\n"), "");
  const ConfigOption* wait = nullptr;
  for (const auto& o : config_options())
    if (o.key == "interface_wait_seconds") wait = &o;
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->long_flag(), "--interface-wait-seconds");
  EXPECT_TRUE(set_option(*wait, "120", c).ok());
  EXPECT_EQ(c.interface_wait_seconds, 120u);
  EXPECT_FALSE(set_option(*wait, "-1", c).ok());
}

TEST_F(ConfigFile, NetfilterSysctlDirIsAnAbsolutePath) {
  Config c;
  EXPECT_EQ(c.netfilter_sysctl_dir, "/proc/sys/net/netfilter") << "the default";
  EXPECT_EQ(error("netfilter_sysctl_dir: /host/proc/sys/net/netfilter\n", c), "");
  EXPECT_EQ(c.netfilter_sysctl_dir, "/host/proc/sys/net/netfilter");
  EXPECT_EQ(error("netfilter_sysctl_dir: host/proc/sys/net/netfilter\n", c),
            path.string() + ":1:23: error: netfilter_sysctl_dir: must be an absolute path");
  EXPECT_EQ(error("netfilter_sysctl_dir: \"\"\n", c),
            path.string() + ":1:23: error: netfilter_sysctl_dir: must be an absolute path");
  EXPECT_EQ(c.netfilter_sysctl_dir, "/host/proc/sys/net/netfilter") << "bad input changes nothing";
  const ConfigOption* dir = nullptr;
  for (const auto& o : config_options())
    if (o.key == "netfilter_sysctl_dir") dir = &o;
  ASSERT_NE(dir, nullptr);
  EXPECT_EQ(dir->long_flag(), "--netfilter-sysctl-dir");
  EXPECT_TRUE(set_option(*dir, "/run/nf", c).ok());
  EXPECT_EQ(c.netfilter_sysctl_dir, "/run/nf");
  EXPECT_FALSE(set_option(*dir, "relative", c).ok());
}

TEST(ConfigOptions, FlagValuesAreCheckedAsTheFileIs) {
  const ConfigOption* cap = nullptr;
  for (const auto& o : config_options())
    if (o.key == "key_capacity") cap = &o;
  ASSERT_NE(cap, nullptr);
  Config c;
  EXPECT_TRUE(set_option(*cap, "4096", c).ok());
  EXPECT_EQ(c.key_capacity, 4096u);
  auto s = set_option(*cap, "4k", c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "expected a whole number, got '4k'");
  EXPECT_FALSE(set_option(*cap, "", c).ok());
  EXPECT_FALSE(set_option(*cap, "63", c).ok());
  EXPECT_EQ(option_facts(*cap), "[keys, 64-268435456; default 1048576; rld.yaml: key_capacity]");
}

TEST(CheckConfig, ChecksEveryPolicyFileAcrossFiles) {
  fs::path dir = fs::temp_directory_path() / ("rl-check-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const char* rule =
      "rules:\n  - name: same\n    match: {protocol: udp, port: 53}\n    limit: {rate: 10/s}\n";
  std::ofstream(dir / "a.yaml") << rule;
  Config cfg;
  cfg.policy_dir = dir;
  cfg.interfaces = {"eth0"};
  auto good = check_config(cfg);
  EXPECT_TRUE(good.ok());
  EXPECT_TRUE(good.warnings.empty());
  EXPECT_NE(good.summary.find("policy: 1 rules"), std::string::npos) << good.summary;
  EXPECT_NE(good.summary.find("  key_capacity: 1048576\n"), std::string::npos);
  std::ofstream(dir / "b.yml") << rule;  // the same rule name in a second file
  auto dup = check_config(cfg);
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.errors[0].find("b.yml:2:"), std::string::npos) << dup.errors[0];
  cfg.redis_password = "hunter2";
  EXPECT_EQ(check_config(cfg).summary.find("hunter2"), std::string::npos);
  // A fresh install's empty directory: valid, and the summary says rld runs without rules.
  fs::remove(dir / "a.yaml");
  fs::remove(dir / "b.yml");
  auto empty = check_config(cfg);
  EXPECT_TRUE(empty.ok());
  EXPECT_NE(empty.summary.find("holds no policy files (*.yaml, *.yml); rld would start without "
                               "rules and pass every packet"),
            std::string::npos)
      << empty.summary;
  fs::remove_all(dir);
  EXPECT_FALSE(check_config(cfg).ok());  // no policy directory
}

// The shipped rld.yaml names no interface: valid, and said loudly.
TEST(CheckConfig, NoInterfaceIsAWarning) {
  fs::path dir = fs::temp_directory_path() / ("rl-noif-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Config cfg;
  cfg.policy_dir = dir;
  auto c = check_config(cfg);
  EXPECT_TRUE(c.ok());
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("rld protects no interface"), std::string::npos) << c.warnings[0];
  cfg.interfaces = {"eth0"};
  EXPECT_TRUE(check_config(cfg).warnings.empty());
  fs::remove_all(dir);
}

// The cluster: section is checked as rld's start makes the store: a configuration the check
// passes is one rld starts with.
TEST(CheckConfig, ChecksTheRedisSettings) {
  Config cfg;
  cfg.policy_dir = fs::temp_directory_path() / ("rl-check-redis-" + std::to_string(::getpid()));
  fs::create_directories(cfg.policy_dir);
  cfg.interfaces = {"eth0"};
  cfg.redis_cluster_nodes = {"10.0.0.5:6379", "10.0.0.6:6379"};
  auto good = check_config(cfg);
  EXPECT_TRUE(good.ok()) << (good.errors.empty() ? "" : good.errors[0]);
  EXPECT_NE(good.summary.find("cluster limits: on, Redis cluster, redis cluster, slots not known "
                              "yet; seeds 10.0.0.5:6379 10.0.0.6:6379"),
            std::string::npos)
      << good.summary;

  cfg.redis_cluster_nodes = {"10.0.0.5"};
  auto bad = check_config(cfg);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.errors[0].find("cluster.redis_cluster_nodes: address '10.0.0.5': want host:port"),
            std::string::npos)
      << bad.errors[0];

  cfg.redis_cluster_nodes = {"10.0.0.5:6379"};
  cfg.redis_sentinels = {"10.0.0.7:26379"};
  cfg.redis_master_name = "rl";
  auto both = check_config(cfg);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.errors[0].find("both sentinels and cluster nodes"), std::string::npos)
      << both.errors[0];

  // TLS files are read when the store is made: a missing one is the configuration's error.
  cfg.redis_sentinels.clear();
  cfg.redis_tls = true;
  auto tls = check_config(cfg);
  EXPECT_TRUE(tls.ok()) << (tls.errors.empty() ? "" : tls.errors[0]);
  EXPECT_NE(tls.summary.find("seeds 10.0.0.5:6379 over TLS\n"), std::string::npos) << tls.summary;
  cfg.redis_tls_ca_file = cfg.policy_dir + "/no-such-ca.pem";
  auto no_ca = check_config(cfg);
  ASSERT_FALSE(no_ca.ok());
  EXPECT_NE(no_ca.errors[0].find("TLS: CA file '" + cfg.redis_tls_ca_file + "'"), std::string::npos)
      << no_ca.errors[0];
  cfg.redis_tls = false;
  auto off = check_config(cfg);
  ASSERT_FALSE(off.ok());
  EXPECT_NE(off.errors[0].find("TLS files or a server name are set but TLS is off"),
            std::string::npos)
      << off.errors[0];
  fs::remove_all(cfg.policy_dir);
}

}  // namespace
}  // namespace rl::daemon
