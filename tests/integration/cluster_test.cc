// SPDX-License-Identifier: GPL-2.0-only
// Cluster-wide limits end to end: three rld nodes, each in its own namespace with its own
// XDP-attached veth, sharing one real redis-server (on a Unix socket: reachable from every
// namespace, no network). One spoofed source floods all three nodes at once.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "lab.h"
#include "process.h"
#include "redis_server.h"
#include "traffic.h"

namespace rl::testing {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

constexpr size_t kNodes = 3;

class ClusterLab : public ::testing::Test {
 protected:
  void SetUp() override {
    auto lab = Lab::create(LabOptions{.servers = kNodes});
    ASSERT_TRUE(lab.ok()) << lab.error().str();
    lab_ = std::make_unique<Lab>(std::move(*lab));
    ASSERT_FALSE(RedisServer::binary().empty())
        << "redis-server is required (scripts/install-deps.sh)";
    auto redis = RedisServer::start({.unix_socket = true});
    ASSERT_TRUE(redis.ok()) << redis.error().str();
    redis_ = std::move(*redis);
    dir_ = fs::path("/tmp") / ("rl-cl-" + lab_->tag());
    fs::create_directories(dir_);
  }

  void TearDown() override {
    nodes_.clear();
    for (size_t i = 0; i < kNodes && lab_; i++)
      run({"nsenter", "--net=/run/netns/" + lab_->server_ns(i), RL_RLD_PATH, "--cleanup",
           "--pin-root", pin_root(i)});
    std::error_code ec;
    fs::remove_all(dir_, ec);
    redis_.reset();
    lab_.reset();
  }

  std::string pin_root(size_t i) const {
    return "/sys/fs/bpf/rl-cl-" + lab_->tag() + "-" + std::to_string(i);
  }
  std::string sock(size_t i) const {
    return (dir_ / ("rld" + std::to_string(i) + ".sock")).string();
  }

  // Starts node i with `policy`; `time_offset_s` runs it in a time namespace whose monotonic
  // clock is that far from the host's.
  void start_node(size_t i, const std::string& policy, int time_offset_s = 0) {
    fs::path pdir = dir_ / ("policies" + std::to_string(i));
    fs::create_directories(pdir);
    std::ofstream(pdir / "fleet.yaml") << policy;
    std::vector<std::string> argv;
    if (time_offset_s)
      argv = {"unshare", "--time", "--monotonic=" + std::to_string(time_offset_s),
              "--boottime=" + std::to_string(time_offset_s)};
    std::vector<std::string> rld = {"nsenter",
                                    "--net=/run/netns/" + lab_->server_ns(i),
                                    RL_RLD_PATH,
                                    "--interface",
                                    lab_->pair(i).server.ifname,
                                    "--policy-dir",
                                    pdir.string(),
                                    "--pin-root",
                                    pin_root(i),
                                    "--control-socket",
                                    sock(i),
                                    "--metrics-listen",
                                    "",
                                    "--key-capacity",
                                    "65536",
                                    "--redis-socket",
                                    redis_->unix_socket(),
                                    "--node-name",
                                    "node" + std::to_string(i),
                                    "--cluster-nodes",
                                    "3"};
    rld.insert(rld.end(), node_args_.begin(), node_args_.end());
    argv.insert(argv.end(), rld.begin(), rld.end());
    auto p = Process::spawn(argv);
    ASSERT_TRUE(p.ok()) << p.error().str();
    nodes_.push_back(std::make_unique<Process>(std::move(*p)));
    ASSERT_TRUE(nodes_.back()->wait_for("rld running", 10s)) << nodes_.back()->err();
  }

  Json ctl(size_t i, std::vector<std::string> args) {
    std::vector<std::string> argv = {RL_RLCTL_PATH, "-s", sock(i), "-o", "json"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto out = run(argv, 30s);
    EXPECT_TRUE(out.ok()) << out.describe() << out.out;
    Json j = Json::parse(out.out, nullptr, false);
    return j.is_discarded() ? Json::object() : j;
  }

  // Floods every node at once from one spoofed source for `seconds`; returns what each node's
  // application received.
  std::vector<uint64_t> flood(const std::string& src, uint64_t pps_per_node, double seconds) {
    std::vector<Process> sinks, senders;
    for (size_t i = 0; i < kNodes; i++) {
      auto s = start_sink(*lab_, i, {.port = 9, .seconds = seconds + 5, .idle_ms = 1500});
      EXPECT_TRUE(s.ok());
      if (s.ok()) sinks.push_back(std::move(*s));
    }
    for (size_t i = 0; i < kNodes; i++) {
      SendSpec spec{.src = src,
                    .count = static_cast<uint64_t>(pps_per_node * seconds),
                    .rate = pps_per_node,
                    .max_seconds = seconds + 10};
      auto p = lab_->spawn_in(lab_->client_ns(), rlsend_argv(lab_->pair(i), spec));
      EXPECT_TRUE(p.ok());
      if (p.ok()) senders.push_back(std::move(*p));
    }
    for (auto& s : senders)
      EXPECT_TRUE(s.wait(std::chrono::seconds(static_cast<int>(seconds) + 15)).ok());
    std::vector<uint64_t> got;
    for (auto& s : sinks) {
      auto r = finish_sink(s, 15s);
      got.push_back(r.ok() ? r->received : 0);
    }
    return got;
  }

  std::unique_ptr<Lab> lab_;
  std::unique_ptr<RedisServer> redis_;
  std::vector<std::unique_ptr<Process>> nodes_;
  std::vector<std::string> node_args_;  // more of rld's arguments, for every node
  fs::path dir_;
};

// Each node alone allows 100/s; the fleet together allows 100/s.
constexpr char kFleetPolicy[] =
    "rules:\n"
    "  - name: fleet\n"
    "    match: {protocol: udp, port: 9}\n"
    "    limit: {rate: 100/s, burst: 2}\n"
    "    cluster: {rate: 100/s, on_redis_failure: open}\n";

// The policy's numbers, for the bounds below.
constexpr double kLimit = 100;      // fleet, per 1 s window
constexpr double kLocalRate = 100;  // each node alone, per second
constexpr double kLocalBurst = 2;
constexpr double kInterval = 0.1;  // sync interval, s

// docs/cluster.md, "Worst-case overshoot": until a block lands, each node keeps admitting at its
// local rate for up to two sync intervals, plus its local burst, once per window.
double fleet_bound(double seconds, double windows) {
  return kLimit * seconds + windows * kNodes * (kLocalBurst + kLocalRate * 2 * kInterval);
}

uint64_t sum(const std::vector<uint64_t>& v) {
  uint64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

TEST_F(ClusterLab, ThreeNodesHoldTheFleetLimit) {
  for (size_t i = 0; i < kNodes; i++) start_node(i, kFleetPolicy);
  constexpr double kSeconds = 10;
  auto got = flood("198.18.50.1", 300, kSeconds);
  uint64_t total = sum(got);
  std::printf(
      "fleet admitted %lu (per node %lu %lu %lu); the limit allows %.0f, local limits alone %.0f\n",
      (unsigned long)total, (unsigned long)got[0], (unsigned long)got[1], (unsigned long)got[2],
      100 * kSeconds, 3 * 100 * kSeconds);
  EXPECT_GE(total, 0.9 * 100 * kSeconds);
  EXPECT_LE(total, 1.1 * 100 * kSeconds);
  for (auto n : got) EXPECT_GT(n, 0u) << "every node admitted its part";
  Json st = ctl(0, {"cluster", "status"});
  EXPECT_TRUE(st["redis_up"].get<bool>());
  EXPECT_EQ(st["peers"].size(), kNodes);
}

// Fleets give rld an ACL user of its own. With exactly the permissions docs/cluster.md lists,
// set in rld.yaml, the fleet limit holds; a permission taken away shows in cluster status and
// the error counts by name, and the local limits keep enforcing.
TEST_F(ClusterLab, AnAclUserWithTheDocumentedPermissionsHoldsTheFleetLimit) {
  const std::string password = "fleet-acl-" + lab_->tag();
  auto acl = documented_acl(password);
  ASSERT_FALSE(acl.empty()) << "docs/cluster.md has no ACL SETUSER line";
  auto made = redis_->command(acl);
  ASSERT_TRUE(made.ok() && !made->is_error()) << (made.ok() ? made->str : made.error().str());
  const fs::path config = dir_ / "rld.yaml";
  std::ofstream(config) << "cluster:\n  redis_user: rld\n  redis_password: " << password << "\n";
  fs::permissions(config, fs::perms::owner_read | fs::perms::owner_write);
  node_args_ = {"--config", config.string()};
  for (size_t i = 0; i < kNodes; i++) start_node(i, kFleetPolicy);

  constexpr double kSeconds = 5;
  auto got = flood("198.18.51.1", 300, kSeconds);
  const uint64_t total = sum(got);
  std::printf("fleet admitted %lu as ACL user rld; the limit allows %.0f\n", (unsigned long)total,
              kLimit * kSeconds);
  EXPECT_GE(total, 0.9 * kLimit * kSeconds);
  EXPECT_LE(total, fleet_bound(kSeconds, kSeconds));
  Json st = ctl(0, {"cluster", "status"});
  EXPECT_TRUE(st["redis_up"].get<bool>()) << st.dump();
  EXPECT_EQ(st["last_error"], "") << st.dump();
  EXPECT_EQ(st["peers"].size(), kNodes) << "heartbeats and peers as the ACL user";

  // The user loses +zadd (the heartbeat script's): named within a few heartbeats.
  auto revoked = redis_->command({"ACL", "SETUSER", "rld", "-zadd"});
  ASSERT_TRUE(revoked.ok() && !revoked->is_error());
  Json named;
  for (int i = 0; i < 100; i++) {
    named = ctl(0, {"cluster", "status"});
    if (named["last_error"].get<std::string>().find("'zadd'") != std::string::npos) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_NE(named["last_error"].get<std::string>().find("NOPERM"), std::string::npos)
      << named.dump();
  EXPECT_NE(named["last_error"].get<std::string>().find("'zadd'"), std::string::npos)
      << named.dump();
  EXPECT_GT(named["errors"].value("heartbeat", 0), 0) << named.dump();
}

// Nodes whose clocks differ by seconds still share windows: windows follow Redis's clock, and
// each node's kernel entries follow its own kernel clock.
TEST_F(ClusterLab, SkewedNodeClocksStillShareWindows) {
  start_node(0, kFleetPolicy, 0);
  start_node(1, kFleetPolicy, 7);
  start_node(2, kFleetPolicy, -3);
  constexpr double kSeconds = 6;
  auto got = flood("198.18.51.1", 300, kSeconds);
  uint64_t total = sum(got);
  std::printf(
      "fleet admitted %lu (per node %lu %lu %lu) with node clocks skewed by 0, +7 and -3 s\n",
      (unsigned long)total, (unsigned long)got[0], (unsigned long)got[1], (unsigned long)got[2]);
  EXPECT_GE(total, 0.9 * 100 * kSeconds);
  EXPECT_LE(total, 1.1 * 100 * kSeconds);
  // Equal traffic to every node: a node whose clock misjudged its blocks would starve or flood.
  for (auto n : got) {
    EXPECT_GE(n, total / 5);
    EXPECT_LE(n, total / 2);
  }
}

// Redis killed mid-run: each node keeps its local limit (on_redis_failure: open), keeps its
// deltas, and sends them when Redis is back; nothing crashes or hangs.
TEST_F(ClusterLab, RedisOutageKeepsLocalLimitsAndReplaysDeltas) {
  for (size_t i = 0; i < kNodes; i++) start_node(i, kFleetPolicy);
  auto first = sum(flood("198.18.52.1", 300, 2));
  EXPECT_LE(first, fleet_bound(2, 1)) << "a fresh key overshoots once, by the bound";

  redis_->kill();
  auto during = flood("198.18.52.2", 300, 2);
  // Open: each node enforces only its local 100/s, so the fleet admits up to three times more.
  EXPECT_GE(sum(during), 0.8 * 3 * 100 * 2);
  EXPECT_LE(sum(during), 1.1 * 3 * 100 * 2 + 30);
  Json st = ctl(0, {"cluster", "status"});
  EXPECT_FALSE(st["redis_up"].get<bool>());
  EXPECT_GT(st["pending_keys"].get<uint64_t>(), 0u) << "deltas are kept while Redis is away";
  EXPECT_TRUE(ctl(0, {"status"}).contains("interfaces")) << "rld still answers";

  ASSERT_TRUE(redis_->restart().ok());
  bool drained = false;
  for (int i = 0; i < 100 && !drained; i++) {  // at most 10 s: backoff tops out at 5 s
    std::this_thread::sleep_for(100ms);
    drained = true;
    for (size_t n = 0; n < kNodes; n++) {
      Json s = ctl(n, {"cluster", "status"});
      drained = drained && s["redis_up"].get<bool>() && s["pending_keys"].get<uint64_t>() == 0;
    }
  }
  EXPECT_TRUE(drained) << "every node reconnected and replayed its deltas";
  // The replayed deltas arrived: Redis counts what the fleet admitted during the outage.
  // The rule's hash (docs/cluster.md, "Keys"): the source is a field of it.
  auto has = redis_->command({"HEXISTS", "rl:{fleet}:1000", "198.18.52.2"});
  ASSERT_TRUE(has.ok());
  EXPECT_EQ(has->integer, 1);
}

}  // namespace
}  // namespace rl::testing

namespace rl::testing {
namespace {

// on_redis_failure: closed. Without Redis each node holds the key to limit/N per window (N the
// nodes seen alive), so the fleet stays near its limit rather than at N times it.
TEST_F(ClusterLab, ClosedRulesFallBackToTheirShareWhenRedisIsDown) {
  std::string policy = kFleetPolicy;
  policy.replace(policy.find("on_redis_failure: open"), 22, "on_redis_failure: closed");
  for (size_t i = 0; i < kNodes; i++) start_node(i, policy);
  // Let every node see the others in Redis before it goes away.
  std::this_thread::sleep_for(2500ms);
  EXPECT_EQ(ctl(0, {"cluster", "status"})["peers"].size(), kNodes);
  redis_->kill();
  constexpr double kSeconds = 4;
  auto got = flood("198.18.53.1", 300, kSeconds);
  uint64_t total = sum(got);
  std::printf("fleet admitted %lu (per node %lu %lu %lu) with Redis down, closed rule\n",
              (unsigned long)total, (unsigned long)got[0], (unsigned long)got[1],
              (unsigned long)got[2]);
  // Each node: 100/3 per 1 s window, plus what it admits before its local block lands, in every
  // window (it has no fleet view to carry over).
  EXPECT_LE(total, fleet_bound(kSeconds, kSeconds));
  EXPECT_GE(total, 0.75 * kLimit * kSeconds);
}

}  // namespace
}  // namespace rl::testing
