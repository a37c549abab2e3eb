// SPDX-License-Identifier: GPL-2.0-only
// A node's whole cluster sync at scale, as rld runs it: the kernel's counts for 100,000 keys
// read back, turned into deltas, sent to a real redis-server in one round trip, and the keys
// over the fleet limit written into the kernel. It prints its figures (docs/cluster.md,
// "Measured"); the only assertions are on what the sync did, not on how fast.
//   ./build/tests/bpf/cluster_node_test
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "cluster/redis_store.h"
#include "cluster/sync/cluster_sync.h"
#include "fixture.h"
#include "redis_server.h"
#include "support/files.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Every thread of process `pid` onto the CPUs in `cpus`.
bool pin(pid_t pid, const cpu_set_t& cpus) {
  std::error_code ec;
  bool ok = true;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
    ok &= sched_setaffinity(std::stoi(task.path().filename()), sizeof(cpus), &cpus) == 0;
  return ok && !ec;
}

// CPU time of process `pid`'s main thread, in ns (/proc/<pid>/schedstat): Redis runs commands
// there.
uint64_t main_thread_cpu_ns(pid_t pid) {
  uint64_t ns = 0;
  std::sscanf(read_text("/proc/" + std::to_string(pid) + "/schedstat").c_str(), "%lu", &ns);
  return ns;
}

class ClusterNodeTest : public BpfTest {
 protected:
  void SetUp() override {
    LoadOptions o;
    o.key_capacity = 1 << 18;
    o.cluster_keys = 1 << 18;
    auto dp = BpfDatapath::load(o);
    ASSERT_TRUE(dp.ok()) << dp.error().str();
    dp_ = std::move(*dp);
    hooks().set_clock(kT0);
    auto s = RedisServer::start();
    ASSERT_TRUE(s) << s.error().str();
    redis_ = std::move(*s);
  }

  std::unique_ptr<RedisServer> redis_;
};

TEST_F(ClusterNodeTest, HundredThousandKeysInOneSync) {
  const int kKeys = 100'000;
  policy::Rule rule = token_bucket("fleet", 1'000'000, 1'000'000);  // the local limit stays out
  rule.cluster = policy::ClusterLimit{per_second(50), policy::RedisFailure::kOpen};
  policy::Policy p;
  p.rules = {rule};
  apply(p);

  cluster::RedisOptions o;
  o.port = redis_->port();
  o.command_timeout = 10s;
  auto store = cluster::RedisStore::connect(o);
  ASSERT_TRUE(store) << store.error().str();
  cluster::ClusterConfig cfg;
  cfg.node = "scale";
  cfg.interval = 1h;  // unused: each pass is run below, on this thread, and timed alone
  // A fleet of four: the light threshold is then 1, so every key is active and synced.
  cfg.nodes = 4;
  auto rules = [&] {
    return std::vector<cluster::SyncRule>{{"fleet", compiled_.rules[0], *rule.cluster}};
  };
  cluster::ClusterSync sync(*dp_, std::move(*store), cfg, rules);

  // One source per key, in 198.18.0.0/15; one in a hundred sends past the fleet limit.
  std::vector<std::vector<uint8_t>> frames;
  frames.reserve(kKeys);
  for (int i = 0; i < kKeys; i++)
    frames.push_back(udp4("198." + std::to_string(18 + (i >> 16)) + "." +
                          std::to_string(i >> 8 & 255) + "." + std::to_string(i & 255)));
  auto send_round = [&](bool burst) {
    for (int i = 0; i < kKeys; i++) {
      int n = burst && i % 100 == 0 ? 60 : 1;
      for (int k = 0; k < n; k++) ASSERT_TRUE(hooks().run(frames[i]).ok());
    }
  };

  // Rounds 1 to 5 with Redis on the node's CPUs, as when both run on one host; 6 to 10 with
  // Redis on a CPU of its own and the node on the others, as with Redis on its own host.
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  ASSERT_GE(cpus, 2);
  for (int round = 0; round < 11; round++) {
    const bool apart = round > 5;
    if (round == 6) {
      cpu_set_t redis_cpu, node_cpus;
      CPU_ZERO(&redis_cpu);
      CPU_ZERO(&node_cpus);
      CPU_SET(cpus - 1, &redis_cpu);
      for (int c = 0; c < cpus - 1; c++) CPU_SET(c, &node_cpus);
      ASSERT_TRUE(pin(redis_->pid(), redis_cpu));
      ASSERT_TRUE(pin(getpid(), node_cpus));
    }
    send_round(round == 0);
    // The kernel read alone, for the record (the sync below reads the same counts again).
    auto read_start = Clock::now();
    auto counts = dp_->cluster_admitted();
    auto read_ms = std::chrono::duration<double, std::milli>(Clock::now() - read_start).count();
    ASSERT_TRUE(counts) << counts.error().str();
    EXPECT_EQ(counts->size(), static_cast<size_t>(kKeys));

    auto usec_before = redis_->command_usec("evalsha");
    ASSERT_TRUE(usec_before);
    const uint64_t busy_before = main_thread_cpu_ns(redis_->pid());
    const auto before = sync.stats();
    sync.run_pass();
    auto st = sync.stats();
    ASSERT_EQ(st.passes, before.passes + 1);
    ASSERT_EQ(st.syncs, before.syncs + 1);
    const double ms = st.last_pass_seconds * 1000;
    auto usec_after = redis_->command_usec("evalsha");
    ASSERT_TRUE(usec_after);
    const double redis_ms = (*usec_after - *usec_before) / 1000.0;
    const double busy_ms = (main_thread_cpu_ns(redis_->pid()) - busy_before) / 1e6;
    // Blocked keys send nothing after the first round; the rest each admitted one packet.
    EXPECT_GE(st.keys_last_sync, static_cast<uint64_t>(kKeys * 99 / 100));
    std::printf(
        "node: %d keys, %s, Redis %s: whole sync %.1f ms (Redis: %.1f ms on the CPU, "
        "%.1f ms in the script; the kernel read alone %.1f ms), %llu keys sent, %llu blocked in "
        "the "
        "kernel\n",
        kKeys, round == 0 ? "new keys" : "existing keys",
        apart ? "on a CPU of its own" : "sharing the CPUs", ms, busy_ms, redis_ms, read_ms,
        static_cast<unsigned long long>(st.keys_last_sync),
        static_cast<unsigned long long>(st.active_blocks));
    if (round == 0) {
      // The bursting keys are over the fleet limit: the sync wrote them into the kernel.
      EXPECT_EQ(st.active_blocks, static_cast<uint64_t>(kKeys / 100));
    }
  }
}

}  // namespace
}  // namespace rl::testing
