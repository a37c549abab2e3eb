// SPDX-License-Identifier: GPL-2.0-only
// `rld --check-config --connect` against real redis-server processes: the configured Redis is
// tried with the configured credentials, and each failure is named (wrong password, nothing
// listening, a Redis Cluster node named as one server). Without --connect nothing is contacted.
#include <gtest/gtest.h>

#include "ports.h"
#include "process.h"
#include "redis_cluster.h"
#include "redis_server.h"
#include "scratch_dir.h"

namespace rl::testing {
namespace {

class CheckConnectTest : public ScratchDirTest {
 protected:
  CheckConnectTest() : ScratchDirTest("rl-check-connect-") {}

  void SetUp() override {
    ScratchDirTest::SetUp();
    ASSERT_FALSE(RedisServer::binary().empty()) << "redis-server is required";
    std::filesystem::create_directories(dir_ / "policies");
    config_ = write("rld.yaml", "log_level: warn\n");
  }

  Output check(std::vector<std::string> flags, bool connect = true) {
    std::vector<std::string> argv = {RL_RLD_PATH, "--check-config", "--config",
                                     config_,     "--policy-dir",   (dir_ / "policies").string()};
    if (connect) argv.emplace_back("--connect");
    argv.insert(argv.end(), flags.begin(), flags.end());
    return run(argv, std::chrono::seconds(20));
  }

  std::string config_;
};

TEST_F(CheckConnectTest, TriesRedisWithTheConfiguredPassword) {
  auto server = RedisServer::start({.password = "s3cret-pass"});
  ASSERT_TRUE(server) << server.error().str();
  const std::string port = std::to_string((*server)->port());
  auto ok =
      check({"--redis-host", "127.0.0.1", "--redis-port", port, "--redis-password", "s3cret-pass"});
  EXPECT_EQ(ok.code, 0) << ok.describe();
  EXPECT_NE(ok.out.find("(answered)"), std::string::npos) << ok.out;

  auto wrong =
      check({"--redis-host", "127.0.0.1", "--redis-port", port, "--redis-password", "not-the-one"});
  EXPECT_EQ(wrong.code, 1) << wrong.describe();
  EXPECT_NE(wrong.err.find("\ncluster: connect: redis 127.0.0.1:" + port + ": AUTH: WRONGPASS"),
            std::string::npos)
      << wrong.err;
  EXPECT_EQ(wrong.err.find("not-the-one"), std::string::npos) << "leaks the password";

  // Without --connect the settings are only read: the wrong password passes.
  auto unchecked =
      check({"--redis-host", "127.0.0.1", "--redis-port", port, "--redis-password", "not-the-one"},
            false);
  EXPECT_EQ(unchecked.code, 0) << unchecked.describe();
}

TEST_F(CheckConnectTest, NamesAServerThatIsNotThere) {
  auto port = free_loopback_port();
  ASSERT_TRUE(port) << port.error().str();
  auto out = check({"--redis-host", "127.0.0.1", "--redis-port", std::to_string(*port)});
  EXPECT_EQ(out.code, 1) << out.describe();
  EXPECT_NE(out.err.find("127.0.0.1:" + std::to_string(*port)), std::string::npos) << out.err;
}

// A Redis Cluster given as its nodes answers from every master; one of its nodes given as a
// single server is named as what it is.
TEST_F(CheckConnectTest, TellsAClusterNodeFromAServer) {
  auto cluster = RedisCluster::start({.masters = 3, .replicas = 0});
  ASSERT_TRUE(cluster) << cluster.error().str();
  const auto seed = (*cluster)->seeds().front();
  auto ok = check({"--redis-cluster-node", seed.host + ":" + std::to_string(seed.port)});
  EXPECT_EQ(ok.code, 0) << ok.describe();
  EXPECT_NE(ok.out.find("(answered)"), std::string::npos) << ok.out;

  // The nodes key lives on one master: named as one server, the other two answer MOVED.
  bool named = false;
  for (const auto& node : (*cluster)->nodes()) {
    auto one = check({"--redis-host", "127.0.0.1", "--redis-port", std::to_string(node->port())});
    if (one.code == 0) continue;
    named = true;
    EXPECT_EQ(one.code, 1) << one.describe();
    EXPECT_NE(one.err.find("redis_cluster_nodes"), std::string::npos) << one.err;
  }
  EXPECT_TRUE(named) << "no node was refused";
}

}  // namespace
}  // namespace rl::testing
