// SPDX-License-Identifier: GPL-2.0-only
// The lab for cluster-wide limits: three rld nodes, each in its own namespace with its own
// XDP-attached veth, sharing one real redis-server (on a Unix socket: reachable from every
// namespace, no network) unless a test points them elsewhere. One spoofed source floods all
// three nodes at once.
#pragma once

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

using Json = nlohmann::json;
namespace fs = std::filesystem;

constexpr size_t kNodes = 3;

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
inline double fleet_bound(double seconds, double windows) {
  return kLimit * seconds + windows * kNodes * (kLocalBurst + kLocalRate * 2 * kInterval);
}

inline uint64_t sum(const std::vector<uint64_t>& v) {
  uint64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

class ClusterLab : public ::testing::Test {
 protected:
  // `local_redis`: a standalone redis-server on a Unix socket, which the nodes are pointed at.
  // Without it, node_args_ name the Redis the nodes use.
  explicit ClusterLab(bool local_redis = true) : local_redis_(local_redis) {}

  void SetUp() override {
    auto lab = Lab::create(LabOptions{.servers = kNodes});
    ASSERT_TRUE(lab.ok()) << lab.error().str();
    lab_ = std::make_unique<Lab>(std::move(*lab));
    ASSERT_FALSE(RedisServer::binary().empty())
        << "redis-server is required (scripts/install-deps.sh)";
    if (local_redis_) {
      auto redis = RedisServer::start({.unix_socket = true});
      ASSERT_TRUE(redis.ok()) << redis.error().str();
      redis_ = std::move(*redis);
    }
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

  // Puts a Redis estate on the lab's client namespace: returns its address there (192.0.2.1,
  // on server 0's subnet) after giving the other server namespaces a route to it.
  std::string estate_host() {
    std::string host = lab_->pair(0).client.ipv4;
    for (size_t i = 1; i < kNodes; i++) {
      auto route = lab_->run(lab_->server_ns(i), {"ip", "route", "add", host + "/32", "via",
                                                  lab_->pair(i).client.ipv4});
      EXPECT_TRUE(route.ok()) << route.describe();
    }
    return host;
  }

  // Points every node at the Redis that `cluster_yaml` (the cluster: section's lines) names.
  void use_config(const std::string& cluster_yaml) {
    const fs::path config = dir_ / "rld.yaml";
    std::ofstream(config) << "cluster:\n" << cluster_yaml;
    node_args_ = {"--config", config.string()};
  }

  // Floods `src` at 300/s per node for 3 s; the fleet must admit its limit and no more than
  // fleet_bound allows.
  void expect_fleet_limit(const std::string& src, const char* when) {
    constexpr double kSeconds = 3;
    const uint64_t total = sum(flood(src, 300, kSeconds));
    std::printf("fleet admitted %lu %s; the limit allows %.0f\n", (unsigned long)total, when,
                kLimit * kSeconds);
    EXPECT_GE(total, 0.9 * kLimit * kSeconds) << when;
    EXPECT_LE(total, fleet_bound(kSeconds, kSeconds)) << when;
  }

  template <typename Done>
  static bool wait_for(std::chrono::milliseconds limit, Done done) {
    for (auto end = std::chrono::steady_clock::now() + limit;
         std::chrono::steady_clock::now() < end; std::this_thread::sleep_for(100ms))
      if (done()) return true;
    return false;
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
                                    std::to_string(key_capacity_),
                                    "--node-name",
                                    "node" + std::to_string(i),
                                    "--cluster-nodes",
                                    std::to_string(cluster_nodes_)};
    if (redis_) rld.insert(rld.end(), {"--redis-socket", redis_->unix_socket()});
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
  size_t cluster_nodes_ = kNodes;       // the fleet size the nodes are told
  size_t key_capacity_ = 65536;
  const bool local_redis_;
  fs::path dir_;
};

}  // namespace rl::testing
