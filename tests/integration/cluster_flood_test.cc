// SPDX-License-Identifier: GPL-2.0-only
// Cluster rules under a flood of spoofed sources, which an attacker picks: the light stage
// (bpf/lib/cluster.h) keeps what Redis and rld spend bounded by the keys near their limits, and
// a heavy source on every node is still held to the fleet limit through the flood. Prints its
// figures (docs/cluster.md, "The light stage"); it asserts what the sync did, not how fast.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "cluster_lab.h"

namespace rl::testing {
namespace {

// CPU time of process pid's main thread, in seconds (/proc/<pid>/schedstat, in ns): Redis runs
// its commands there.
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/schedstat");
  unsigned long long ns = 0;
  in >> ns;
  return static_cast<double>(ns) / 1e9;
}

// Resident memory of pid, in MB.
double rss_mb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

struct FloodRun {
  double seconds = 0;  // on the generator
  uint64_t sent = 0;
  std::string engine;
};

class ClusterFlood : public ClusterLab {
 protected:
  // rlflood from the client namespace to node i: `count` frames, each from a source of `src`
  // that no earlier frame used; `rate` 0 is as fast as the generator goes.
  Process start_flood(size_t i, const std::string& src, uint64_t count, uint64_t rate,
                      uint16_t dport = 9) {
    const Pair& p = lab_->pair(i);
    auto tso = lab_->run(p.client.ns, {"ethtool", "-K", p.client.ifname, "tso", "off"});
    EXPECT_TRUE(tso.ok()) << tso.describe();
    auto gro = lab_->run(p.server.ns, {"ethtool", "-K", p.server.ifname, "gro", "on"});
    EXPECT_TRUE(gro.ok()) << gro.describe();
    auto f = lab_->spawn_in(p.client.ns, {RL_RLFLOOD_PATH, "--quiet",
                                          "--iface",       p.client.ifname,
                                          "--dst-mac",     p.server.mac,
                                          "--src",         src,
                                          "--sources",     std::to_string(count),
                                          "--dst",         p.server.ipv6,
                                          "--dport",       std::to_string(dport),
                                          "--count",       std::to_string(count),
                                          "--rate",        std::to_string(rate),
                                          "--max-seconds", "60"});
    EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().str());
    return std::move(*f);
  }
  FloodRun finish_flood(Process& f) {
    Output r = f.wait(std::chrono::seconds(90));
    EXPECT_TRUE(r.ok()) << r.describe();
    FloodRun run;
    const std::string& out = r.out;
    if (out.find('{') == std::string::npos) return run;
    Json j = Json::parse(out.substr(out.rfind('{')), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << out;
    if (j.is_discarded()) return run;
    run.seconds = j.value("seconds", 0.0);
    run.sent = j.value("sent", 0ULL);
    run.engine = j.value("engine", "");
    return run;
  }
};

constexpr uint64_t kSpoofed = 1 << 20;

// The rule: 10 a minute per IPv6 address, kept local or also fleet-wide.
std::string spoofed_policy(bool cluster) {
  return std::string(
             "rules:\n"
             "  - name: spoofed\n"
             "    match: {protocol: udp, port: 9}\n"
             "    key: source\n"
             "    prefix: {ipv6: 128}\n"
             "    limit: {rate: 10/min}\n") +
         (cluster ? "    cluster: {rate: 10/min}\n" : "");
}

TEST_F(ClusterFlood, AMillionSpoofedSourcesCostRedisAlmostNothing) {
  cluster_nodes_ = 1;
  key_capacity_ = 1 << 20;  // room for the flood's keys: rld's default
  struct Figures {
    FloodRun flood;
    double redis_cpu = 0, rss_growth = 0;
    uint64_t keys_synced = 0, passed = 0;
  };
  auto measure = [&](bool cluster, const std::string& src) {
    Figures f;
    start_node(0, spoofed_policy(cluster));
    std::this_thread::sleep_for(1s);  // the first passes and heartbeat
    const pid_t rld = nodes_.back()->pid();
    const double cpu0 = cpu_seconds(redis_->pid()), rss0 = rss_mb(rld);
    Process flood = start_flood(0, src, kSpoofed, 0);
    f.flood = finish_flood(flood);
    std::this_thread::sleep_for(2s);  // the passes after the flood
    f.redis_cpu = cpu_seconds(redis_->pid()) - cpu0;
    f.rss_growth = rss_mb(rld) - rss0;
    if (cluster) f.keys_synced = ctl(0, {"cluster", "status"})["keys_synced_total"].get<uint64_t>();
    const Json stats = ctl(0, {"stats"});
    for (const auto& r : stats["rules"])
      if (r["name"] == "spoofed") f.passed = r["counters"]["passed_packets"].get<uint64_t>();
    nodes_.clear();
    run({"nsenter", "--net=/run/netns/" + lab_->server_ns(0), RL_RLD_PATH, "--cleanup",
         "--pin-root", pin_root(0)});
    return f;
  };
  // Fresh sources for each run: no key of the second was seen by the first.
  Figures local = measure(false, "2001:db8:100::/64");
  Figures cluster = measure(true, "2001:db8:200::/64");
  std::printf("%lu spoofed IPv6 sources, one frame each (%s):\n", (unsigned long)kSpoofed,
              cluster.flood.engine.c_str());
  std::printf(
      "| rule | passed | Redis CPU | rld RSS growth | flood time (generator) | keys synced |\n");
  std::printf("| local | %lu | %.3f s | %.1f MB | %.2f s | - |\n", (unsigned long)local.passed,
              local.redis_cpu, local.rss_growth, local.flood.seconds);
  std::printf("| cluster | %lu | %.3f s | %.1f MB | %.2f s | %lu |\n",
              (unsigned long)cluster.passed, cluster.redis_cpu, cluster.rss_growth,
              cluster.flood.seconds, (unsigned long)cluster.keys_synced);
  EXPECT_EQ(cluster.flood.sent, kSpoofed);
  EXPECT_GE(cluster.passed, kSpoofed / 2) << "the flood's sources were admitted, and counted";
  // Without the light stage every source is a key for Redis.
  EXPECT_LT(cluster.keys_synced, kSpoofed / 20) << "the flood's keys stay light";
  EXPECT_LE(cluster.rss_growth, 16.0) << "rld holds no state for light keys";
}

// A heavy source at three times the fleet limit on every node, while each node also takes a
// flood of spoofed sources: the fleet still admits the heavy source within its bound.
TEST_F(ClusterFlood, AHeavySourceIsHeldThroughASpoofedFlood) {
  // kFleetPolicy's numbers for every UDP port: the flood goes to port 10, the heavy source to
  // the sink on port 9, which counts it alone.
  for (size_t i = 0; i < kNodes; i++)
    start_node(i,
               "rules:\n"
               "  - name: fleet\n"
               "    match: {protocol: udp}\n"
               "    limit: {rate: 100/s, burst: 2}\n"
               "    cluster: {rate: 100/s, on_redis_failure: open}\n");
  std::this_thread::sleep_for(1500ms);  // peers seen
  constexpr double kSeconds = 4;
  std::vector<Process> floods;
  for (size_t i = 0; i < kNodes; i++)
    floods.push_back(
        start_flood(i, "2001:db8:3" + std::to_string(i) + "::/64", 160'000, 40'000, 10));
  const uint64_t total = sum(flood("198.18.60.1", 300, kSeconds));
  for (auto& f : floods) finish_flood(f);
  for (size_t i = 0; i < kNodes; i++) {
    Json st = ctl(i, {"cluster", "status"});
    std::printf("node %zu: syncs %lu, keys synced %lu, last pass %lu ms, errors %s\n", i,
                (unsigned long)st.value("syncs", 0ULL),
                (unsigned long)st.value("keys_synced_total", 0ULL),
                (unsigned long)st.value("last_pass_ms", 0ULL), st["errors"].dump().c_str());
  }
  std::printf(
      "fleet admitted %lu of the heavy source through the flood; the limit allows %.0f, "
      "the bound %.0f\n",
      (unsigned long)total, kLimit * kSeconds, fleet_bound(kSeconds, kSeconds));
  EXPECT_LE(total, fleet_bound(kSeconds, kSeconds));
  EXPECT_GE(total, 0.75 * kLimit * kSeconds);
}

}  // namespace
}  // namespace rl::testing
